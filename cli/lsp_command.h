// `culprit lsp`: a Language Server Protocol (3.17) server for .attr files,
// over stdin and stdout (framing: cli/lsp_transport.h).
//
//   initialize, initialized, shutdown, exit
//   textDocument/didOpen, didChange, didSave, didClose
//       on open and on save the catalog (the bundled one unless --no-stdlib,
//       each --rules PATH, and the document as it is on disk when no PATH
//       holds it) is compiled and its diagnostics are published: for the
//       document (an empty list when it is clean, so old ones clear) and
//       for every other file of the catalog that has some, or had some the
//       last time
//   textDocument/hover       a kind's makers and readers, an extractor's
//                            sources, regex and kind (cli/lsp_index.h)
//   textDocument/definition  a kind's makers, an extractor's declaration
//
// Hover and definition in a document answer from the last catalog that
// compiled with it (with an edit in flight, from the text as last saved),
// else from the catalog without it. Any other request is answered with
// MethodNotFound (-32601); any other notification is ignored. A body that
// is not JSON gets ParseError (-32700), one that is not a request
// InvalidRequest (-32600), a request whose params are of the wrong shape
// InvalidParams (-32602); a frame the transport skips is logged on stderr.
// Requests are answered in order, one at a time (a compile takes as long
// as `culprit check`).
#pragma once

namespace culprit::cli {

// argv[1] is "lsp". Exit status: 0 after `shutdown` (then `exit`, or the
// end of the input), 1 when `exit` or the end of the input comes without
// `shutdown` (as the protocol says), 2 bad usage.
int cmd_lsp(int argc, char** argv);

}  // namespace culprit::cli
