#include "base/build_id.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace culprit {

namespace {

struct Search {
  uintptr_t address = 0;  // an address inside the object we want
  std::string hex;
};

// The build ID note of one loaded object, if `address` lies in one of its
// loadable segments. Notes are 4-byte aligned records: namesz, descsz, type,
// then the name and the descriptor, each padded to 4 bytes.
int visit(struct dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum && !inside; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    inside = ph.p_type == PT_LOAD && s->address >= begin && s->address < begin + ph.p_memsz;
  }
  if (!inside) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      const unsigned char* desc = name + ((n.n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((n.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* digits = "0123456789abcdef";
        for (uint32_t k = 0; k < n.n_descsz; ++k) {
          s->hex += digits[desc[k] >> 4];
          s->hex += digits[desc[k] & 15];
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;  // the object has no build ID: stop looking
}

}  // namespace

std::string build_id_of(const void* address) {
  Search s;
  s.address = reinterpret_cast<uintptr_t>(address);
  dl_iterate_phdr(visit, &s);
  return s.hex;
}

const std::string& build_id() {
  static const std::string id = build_id_of(reinterpret_cast<const void*>(&visit));
  return id;
}

}  // namespace culprit
