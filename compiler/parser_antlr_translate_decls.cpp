// Inside the ANTLR fence (compiler/parser_internal.h lists its files): the
// Translator's declarations, from ANTLR's parse tree to the extractors,
// rules (with their actions), scenarios and catalog header of an ast::File.
//
// Separate from the expressions (parser_antlr_translate_expr.cpp), which
// every declaration uses: this file follows the grammar's declarations, one
// method each.

#include "compiler/parser_antlr_translator.h"

#include <cstdlib>

#include "base/limits.h"

namespace culprit::parser_internal {

std::vector<ast::FieldInit> Translator::field_inits(P::FieldInitsContext* f) {
  std::vector<ast::FieldInit> out;
  if (!f) return out;
  for (auto* fi : f->fieldInit()) {
    ast::FieldInit x;
    x.name = name(fi->name());
    x.where = range(fi->name());
    x.value = expr(fi->expr());
    out.push_back(std::move(x));
  }
  return out;
}

void Translator::extractor(P::ExtractorDeclContext* c, ast::File& out) {
  ast::Extractor x;
  x.name = c->IDENT()->getText();
  x.where = range(c->IDENT());
  for (auto* n : c->name()) x.sources.emplace_back(name(n), range(n));
  if (auto* k = c->keepClause()) {
    x.keep_range = range(k);
    for (auto* side : k->keepSide()) {
      if (side->INT()) {
        if (x.keep_last) diags_.error("E0101", range(side), "'keep' gives 'last' twice");
        // The count is digits only (the lexer's INT); beyond the limit, or
        // too long to parse, it is E0708.
        const std::string digits = side->INT()->getText();
        int64_t n = digits.size() > 9 ? INT64_MAX : std::stoll(digits);
        if (n < 1 || n > static_cast<int64_t>(limits::kKeepLast)) {
          diags_.error("E0708", range(side->INT()),
                       n < 1 ? std::string("'keep last' needs at least 1 event")
                             : limits::exceeded("keep_last", limits::kKeepLast, "the clause keeps " + digits));
          continue;
        }
        x.keep_last = n;
        continue;
      }
      auto& slot = side->side->getText() == "before" ? x.keep_before_ns : x.keep_after_ns;
      if (slot) diags_.error("E0101", range(side), "'keep' gives the " + side->side->getText() + " side twice");
      slot = parse_duration(side->DURATION());
    }
  }
  for (auto* item : c->extractorItem()) {
    if (auto* m = dynamic_cast<P::MatchItemContext*>(item)) {
      ast::MatchClause clause;
      regex(m->REGEX(), clause.regex, clause.flags);
      clause.range = range(m->REGEX());
      x.matches.push_back(std::move(clause));
    } else if (auto* em = dynamic_cast<P::EmitItemContext*>(item)) {
      if (x.has_emit) diags_.error("E0101", range(em), "extractor '" + x.name + "' has more than one 'emit'");
      x.has_emit = true;
      x.emit_kind = kind_name(em->kindName());
      x.emit_range = range(em->kindName());
      x.emit_fields = field_inits(em->fieldInits());
    } else if (auto* t = dynamic_cast<P::LineTestItemContext*>(item)) {
      ast::LineTest lt;
      auto strings = t->STRING();
      lt.where = range(t);
      if (strings.size() == 2) lt.title = unquote(strings[0]);
      lt.line = unquote(strings.back());
      auto* ex = t->expectLine();
      if (dynamic_cast<P::ExpectNoneContext*>(ex)) {
        lt.expect_none = true;
      } else if (auto* ev = dynamic_cast<P::ExpectEventContext*>(ex)) {
        lt.expect_kind = kind_name(ev->kindName());
        lt.expect_range = range(ev->kindName());
        lt.fields = field_inits(ev->fieldInits());
      }
      x.tests.push_back(std::move(lt));
    }
  }
  out.extractors.push_back(std::move(x));
}

ast::Action Translator::action(P::ActionContext* c) {
  ast::Action a;
  a.where = range(c);
  auto target = [&](P::NodeTargetContext* t) {
    if (!t) return;
    if (dynamic_cast<P::JobTargetContext*>(t)) a.on_job = true;
    else if (auto* e = dynamic_cast<P::ExprTargetContext*>(t)) a.node = expr(e->expr());
  };
  if (auto* e = dynamic_cast<P::EmitActionContext*>(c)) {
    a.kind = ast::ActionKind::Emit;
    a.kind_name = kind_name(e->kindName());
    a.kind_range = range(e->kindName());
    target(e->nodeTarget());
    a.fields = field_inits(e->fieldInits());
  } else if (auto* s = dynamic_cast<P::SymptomActionContext*>(c)) {
    a.kind = ast::ActionKind::Symptom;
    a.kind_name = kind_name(s->kindName());
    a.kind_range = range(s->kindName());
    target(s->nodeTarget());
    if (s->keyClause()) a.key = expr(s->keyClause()->expr());
    if (s->priorityClause()) a.priority = expr(s->priorityClause()->expr());
    if (s->atClause()) a.at = expr(s->atClause()->expr());
    a.fields = field_inits(s->fieldInits());
  } else if (auto* d = dynamic_cast<P::DemoteActionContext*>(c)) {
    a.kind = ast::ActionKind::Demote;
    a.binding = d->IDENT()->getText();
    a.binding_range = range(d->IDENT());
    if (d->query()) a.query = query(d->query());
    a.reason = unquote(d->STRING());
    a.reason_range = range(d->STRING());
  } else if (auto* s2 = dynamic_cast<P::ScrubActionContext*>(c)) {
    a.kind = ast::ActionKind::Scrub;
    a.binding = s2->IDENT()->getText();
    a.binding_range = range(s2->IDENT());
    if (s2->query()) a.query = query(s2->query());
    a.reason = unquote(s2->STRING());
    a.reason_range = range(s2->STRING());
  } else if (auto* p = dynamic_cast<P::SetPriorityActionContext*>(c)) {
    a.kind = ast::ActionKind::SetPriority;
    a.binding = p->IDENT()->getText();
    a.binding_range = range(p->IDENT());
    a.value = expr(p->expr());
  } else if (auto* cl = dynamic_cast<P::ClassifyActionContext*>(c)) {
    a.kind = ast::ActionKind::Classify;
    a.binding = cl->IDENT()->getText();
    a.binding_range = range(cl->IDENT());
    a.domain = name(cl->name());
    a.domain_range = range(cl->name());
    a.sub_domain = unquote(cl->STRING());
    a.sub_domain_range = range(cl->STRING());
    a.generic = cl->generic != nullptr;
    a.on_job = cl->onJob != nullptr;
  } else if (auto* o = dynamic_cast<P::SetOutcomeActionContext*>(c)) {
    a.kind = ast::ActionKind::SetOutcome;
    auto names = o->name();
    auto strings = o->STRING();
    a.status = name(names[0]);
    a.domain_range = range(names[0]);
    if (names.size() > 1) {
      a.domain = name(names[1]);
      a.domain_range = range(names[1]);
      a.sub_domain = unquote(strings[0]);
      a.sub_domain_range = range(strings[0]);
    }
    a.reason = unquote(strings.back());
    a.reason_range = range(strings.back());
  }
  return a;
}

void Translator::rule(P::RuleDeclContext* c, ast::File& out) {
  ast::Rule r;
  r.name = c->IDENT()->getText();
  r.where = range(c->IDENT());
  r.stage = name(c->name());
  r.stage_range = range(c->name());
  if (auto* f = c->forClause()) {
    r.for_binding = f->IDENT()->getText();
    r.for_binding_range = range(f->IDENT());
    r.for_query = query(f->query());
  }
  for (auto* w : c->whereClause()) r.wheres.push_back(expr(w->expr()));
  if (auto* g = c->groupClause()) {
    r.has_group = true;
    r.group_range = range(g);
    for (auto* k : g->expr()) r.group_keys.push_back(expr(k));
    if (g->DURATION()) r.group_within_ns = parse_duration(g->DURATION());
  }
  for (auto* a : c->action()) r.actions.push_back(action(a));
  out.rules.push_back(std::move(r));
}

void Translator::scenario(P::ScenarioDeclContext* c, ast::File& out) {
  ast::Scenario s;
  s.title = unquote(c->STRING());
  s.where = range(c->STRING());
  for (auto* item : c->scenarioItem()) {
    if (auto* n = dynamic_cast<P::ScenarioNodesContext*>(item)) {
      for (auto* str : n->STRING()) s.nodes.push_back(unquote(str));
    } else if (auto* wl = dynamic_cast<P::ScenarioWorkloadContext*>(item)) {
      s.workload_id = unquote(wl->STRING());
      if (wl->name()) {
        s.scheduler = name(wl->name());
        s.scheduler_range = range(wl->name());
      }
    } else if (auto* t = dynamic_cast<P::ScenarioTerminalContext*>(item)) {
      s.terminal_state = name(t->name());
      s.terminal_range = range(t->name());
      if (auto* si = t->signedInt()) {
        int64_t v = parse_int(si->INT(), 10);
        s.terminal_exit = si->getText()[0] == '-' ? -v : v;
      }
    } else if (auto* w = dynamic_cast<P::ScenarioWindowContext*>(item)) {
      s.has_window = true;
      s.window_start = unquote(w->STRING(0));
      s.window_end = unquote(w->STRING(1));
      s.window_range = range(w);
    } else if (auto* l = dynamic_cast<P::ScenarioLogContext*>(item)) {
      ast::ScenarioLog log;
      log.host = unquote(l->STRING(0));
      log.source = name(l->name());
      log.text = unquote(l->STRING(1));
      log.where = range(l);
      s.logs.push_back(std::move(log));
    } else if (auto* rk = dynamic_cast<P::ScenarioRanksContext*>(item)) {
      s.ranks.push_back({unquote(rk->STRING(0)), unquote(rk->STRING(1)), range(rk)});
    } else if (auto* m = dynamic_cast<P::ScenarioMetricContext*>(item)) {
      ast::ScenarioMetric sm;
      sm.host = unquote(m->STRING(0));
      sm.source = name(m->name());
      sm.ts = unquote(m->STRING(1));
      sm.name = unquote(m->STRING(2));
      if (auto* ls = m->metricLabels())
        for (size_t k = 0; k < ls->name().size(); ++k) sm.labels.emplace_back(name(ls->name(k)), unquote(ls->STRING(k)));
      auto* num = m->signedNumber();
      std::string text = num->INT() ? num->INT()->getText() : num->FLOAT()->getText();
      sm.value = std::strtod(text.c_str(), nullptr);
      if (num->getText()[0] == '-') sm.value = -sm.value;
      sm.where = range(m);
      s.metrics.push_back(std::move(sm));
    } else if (auto* e = dynamic_cast<P::ScenarioExpectItemContext*>(item)) {
      ast::ScenarioExpect x;
      auto* se = e->scenarioExpect();
      x.where = range(e);
      if (auto* st = dynamic_cast<P::ExpectStatusContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::Status;
        x.value = name(st->name());
      } else if (auto* d = dynamic_cast<P::ExpectDomainContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::Domain;
        x.value = name(d->name());
      } else if (auto* sd = dynamic_cast<P::ExpectSubDomainContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::SubDomain;
        x.value = unquote(sd->STRING());
      } else if (auto* cu = dynamic_cast<P::ExpectCulpritsContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::Culprits;
        for (auto* str : cu->STRING()) x.culprits.push_back(unquote(str));
      } else if (auto* ss = dynamic_cast<P::ExpectSymptomStateContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::SymptomState;
        x.kind_pattern = kind_pattern(ss->kindPattern());
        if (ss->STRING()) x.node = unquote(ss->STRING());
        x.value = name(ss->name());
      } else if (auto* ns = dynamic_cast<P::ExpectNoSymptomContext*>(se)) {
        x.kind = ast::ScenarioExpectKind::NoSymptom;
        x.kind_pattern = kind_pattern(ns->kindPattern());
        if (ns->STRING()) x.node = unquote(ns->STRING());
      }
      s.expects.push_back(std::move(x));
    }
  }
  out.scenarios.push_back(std::move(s));
}

void Translator::table(P::TableDeclContext* c, ast::File& out) {
  ast::Table t;
  t.name = c->IDENT()->getText();
  t.where = range(c->IDENT());
  for (auto* n : c->name()) t.columns.emplace_back(name(n), range(n));
  for (auto* r : c->tableRow()) {
    std::vector<ast::TableCell> cells;
    for (auto* cell : r->tableCell()) {
      ast::TableCell x;
      x.where = range(cell);
      if (auto* si = cell->signedInt()) {
        int64_t v = parse_int(si->INT(), 10);
        x.value = Value::integer(si->getText()[0] == '-' ? -v : v);
      } else if (cell->STRING()) {
        x.value = Value::string(unquote(cell->STRING()));
      }  // else `null`
      cells.push_back(std::move(x));
    }
    t.rows.push_back(std::move(cells));
    t.row_ranges.push_back(range(r));
  }
  out.tables.push_back(std::move(t));
}

void Translator::file(P::FileContext* f, ast::File& out) {
  for (auto* d : f->decl()) {
    if (auto* c = d->catalogDecl()) {
      if (out.catalog) {
        diags_.error("E0102", range(c), "a file may declare its catalog only once");
        continue;
      }
      out.catalog = ast::CatalogHeader{unquote(c->STRING(0)), unquote(c->STRING(1)), range(c)};
    } else if (auto* x = d->extractorDecl()) {
      extractor(x, out);
    } else if (auto* r = d->ruleDecl()) {
      rule(r, out);
    } else if (auto* s = d->scenarioDecl()) {
      scenario(s, out);
    } else if (auto* t = d->tableDecl()) {
      table(t, out);
    }
  }
}

}  // namespace culprit::parser_internal
