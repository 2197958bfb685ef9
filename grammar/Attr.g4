// Grammar of the .attr rule language. The reference is docs/language.md.
//
// This file is the only input to the ANTLR tool; the generated lexer and
// parser are build products (never edited, never checked in). Parser rule
// names avoid `rule`, which collides with the generated C++ code.
grammar Attr;

file        : decl* EOF ;

decl        : catalogDecl
            | extractorDecl
            | ruleDecl
            | scenarioDecl
            | tableDecl
            ;

// ---------------------------------------------------------------- catalog
catalogDecl : 'catalog' STRING 'version' STRING ;

// ------------------------------------------------------------------ table
// A message catalog as data: named columns, one literal row per entry.
// Expressions read it with lookup(TABLE, COLUMN, VALUE, RESULT_COLUMN), an
// extractor's regex matches any value of a column with (?&TABLE.COLUMN).
tableDecl   : 'table' IDENT '{' 'columns' name (',' name)* tableRow* '}' ;
tableRow    : 'row' tableCell (',' tableCell)* ;
tableCell   : signedInt | STRING | 'null' ;

// -------------------------------------------------------------- extractor
extractorDecl : 'extractor' IDENT 'from' name (',' name)* keepClause? '{' extractorItem* '}' ;
// Events of this extractor are kept this far outside the workload window
// (instead of the default slack): node state read before or after the job.
// `keep last N`: of a file, only the extractor's last N events in scope are
// kept (progress lines: the latest matter, not the thousands before them).
keepClause    : 'keep' keepSide (',' keepSide)* ;
keepSide      : DURATION side=('before' | 'after')
              | 'last' INT
              ;

extractorItem : 'match' REGEX                                  # matchItem
              | 'emit' kindName fieldInits?                   # emitItem
              | 'test' STRING? '{' 'line' STRING expectLine '}' # lineTestItem
              ;

expectLine  : 'expect' 'none'                                 # expectNone
            | 'expect' kindName fieldInits?                   # expectEvent
            ;

fieldInits  : '{' (fieldInit (',' fieldInit)* ','?)? '}' ;
fieldInit   : name ':' expr ;

// ------------------------------------------------------------------ rules
ruleDecl    : 'rule' IDENT 'stage' name '{' forClause? whereClause* groupClause? action+ '}' ;

forClause   : 'for' IDENT ':' query ;
whereClause : 'where' expr ;
groupClause : 'group' 'by' expr (',' expr)* ('within' DURATION)? ;

query       : itemType kindPattern nodeRelation? ('where' expr)? withinClause? ;
itemType    : 'event' | 'symptom' ;
nodeRelation: 'on' 'same' 'node'                               # sameNode
            | 'on' 'other' 'nodes'                             # otherNodes
            | 'on' 'any' 'node'                                # anyNode
            ;
withinClause: 'within' DURATION direction=('before' | 'after' | 'around') IDENT ;

action      : 'emit' kindName nodeTarget? fieldInits?                              # emitAction
            | 'symptom' kindName nodeTarget? keyClause? priorityClause? atClause? fieldInits? # symptomAction
            | 'demote' IDENT (':' query)? 'because' STRING                         # demoteAction
            | 'scrub' IDENT (':' query)? 'because' STRING                          # scrubAction
            | 'set' IDENT '.' 'priority' '=' expr                                  # setPriorityAction
            | 'classify' IDENT 'as' name STRING generic='generic'? (onJob='on' 'job')? # classifyAction
            | 'set' 'outcome' name (name STRING)? 'because' STRING                 # setOutcomeAction
            ;
nodeTarget    : 'on' 'job'                                     # jobTarget
              | 'on' expr                                      # exprTarget
              ;
keyClause     : 'key' expr ;
priorityClause: 'priority' expr ;
atClause      : 'at' expr ;

// -------------------------------------------------------------- scenarios
scenarioDecl : 'scenario' STRING '{' scenarioItem* '}' ;

scenarioItem : 'nodes' STRING (',' STRING)*                    # scenarioNodes
             | 'workload' STRING ('on' name)?                  # scenarioWorkload
             | 'terminal' name ('exit' signedInt)?             # scenarioTerminal
             | 'window' STRING 'to' STRING                     # scenarioWindow
             | 'log' STRING name STRING                        # scenarioLog
             | 'ranks' STRING STRING                           # scenarioRanks
             | 'metric' STRING name STRING STRING metricLabels? signedNumber # scenarioMetric
             | 'expect' scenarioExpect                         # scenarioExpectItem
             ;
scenarioExpect : 'status' name                                 # expectStatus
               | 'domain' name                                 # expectDomain
               | 'sub_domain' STRING                           # expectSubDomain
               | 'culprits' '[' (STRING (',' STRING)*)? ']'    # expectCulprits
               | 'symptom' kindPattern ('on' STRING)? name     # expectSymptomState
               | 'no' 'symptom' kindPattern ('on' STRING)?     # expectNoSymptom
               ;
signedInt   : '-'? INT ;
signedNumber: '-'? (INT | FLOAT) ;
metricLabels: '{' (name ':' STRING (',' name ':' STRING)*)? '}' ;

// ------------------------------------------------------------ expressions
// Precedence, tightest first: field access, unary, * %, + -, shifts, &, ^, |,
// comparisons and tests (temporal order `y not before x - 5m` among them),
// not, and, or. Bit operators bind tighter than
// comparisons (as in Go and Python), so `x & 0x3F == 0` means `(x & 0x3F) == 0`.
expr        : primary                                          # primaryExpr
            | expr '.' name                                    # fieldExpr
            | op='-' expr                                      # negateExpr
            | expr op=('*' | '%') expr                         # binaryExpr
            | expr op=('+' | '-') expr                         # binaryExpr
            | expr op=('<<' | '>>') expr                       # binaryExpr
            | expr op='&' expr                                 # binaryExpr
            | expr op='^' expr                                 # binaryExpr
            | expr op='|' expr                                 # binaryExpr
            | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr # binaryExpr
            | expr negated='not'? op=('before' | 'after') expr  # orderExpr
            | expr 'matches' REGEX                             # matchesExpr
            | expr 'is' negated='not'? 'null'                  # isNullExpr
            | expr negated='not'? 'in' '[' expr (',' expr)* ']' # inExpr
            | op='not' expr                                    # notExpr
            | expr op='and' expr                               # binaryExpr
            | expr op='or' expr                                # binaryExpr
            ;

primary     : INT                                              # intLit
            | HEX                                              # hexLit
            | FLOAT                                            # floatLit
            | DURATION                                         # durationLit
            | STRING                                           # stringLit
            | ('true' | 'false')                               # boolLit
            | 'null'                                           # nullLit
            | fn=('exists' | 'none' | 'count' | 'nodes') '(' IDENT ':' query ')' # queryAgg
            | fn=('max' | 'min') '(' IDENT ':' query ',' expr ')'          # queryValueAgg
            | name '(' (expr (',' expr)*)? ')'                 # callExpr
            | name                                             # nameRef
            | '(' expr ')'                                     # parenExpr
            ;

kindName    : name ('.' name)* ;
kindPattern : '*'                                              # anyKind
            | name ('.' name)* ('.' '*')?                      # namedKind
            ;

// Keywords that are also ordinary words in event schemas stay usable as
// names (fields, kinds, sources, functions).
name        : IDENT
            | 'node' | 'nodes' | 'line' | 'count' | 'key' | 'priority' | 'job'
            | 'status' | 'domain' | 'sub_domain' | 'symptom' | 'event' | 'none'
            | 'exists' | 'max' | 'min' | 'same' | 'other' | 'any' | 'version'
            | 'outcome' | 'terminal' | 'exit' | 'window' | 'log' | 'culprits'
            | 'before' | 'after' | 'around' | 'group' | 'by' | 'as' | 'from'
            | 'catalog' | 'test' | 'no' | 'stage' | 'match' | 'emit' | 'to'
            | 'scrub' | 'demote' | 'classify' | 'set' | 'rule' | 'extractor'
            | 'scenario' | 'expect' | 'because' | 'workload' | 'metric' | 'at' | 'keep' | 'last' | 'generic'
            | 'table' | 'columns' | 'row' | 'ranks'
            ;

// ------------------------------------------------------------------ lexer
REGEX       : '/' ( '\\' ~[\r\n] | ~[/\\\r\n] )+ '/' [is]* ;
STRING      : '"' ( '\\' ~[\r\n] | ~["\\\r\n] )* '"' ;
DURATION    : [0-9]+ ('ns' | 'us' | 'ms' | 's' | 'm' | 'h' | 'd') ;
HEX         : '0' [xX] [0-9a-fA-F]+ ;
FLOAT       : [0-9]+ '.' [0-9]+ ;
INT         : [0-9]+ ;
IDENT       : [a-zA-Z_] [a-zA-Z_0-9]* ;
COMMENT     : '#' ~[\r\n]* -> skip ;
WS          : [ \t\r\n]+ -> skip ;
// Anything else becomes a token the parser rejects, so a stray character is
// reported at its position instead of being dropped by the lexer.
UNKNOWN_CHAR: . ;
