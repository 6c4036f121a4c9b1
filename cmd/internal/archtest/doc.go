// Package archtest holds no code, only tests: they check the module's
// architecture, so that a wrong arrow or an outgrown file fails CI instead
// of waiting for a reviewer to notice. Each test reports every violation it
// finds in one run.
//
// The layout the rules assume (README.md, Architecture):
//
//	interactions/            public Go API: the coordinator and its types
//	interactions/client      public Go client of leashd's HTTP API
//	engine/                  the engine core
//	engine/approval          permission request → interaction
//	engine/agent/{claude,acp,demo}, engine/agent/internal/agentproc,
//	engine/agent/sandbox (+ bwrap, docker)
//	engine/{sqlite,mcpserver,metrics,policy,worktree}
//	engine/enginetest        test doubles (+ fakeapi, gittest)
//	connectors/              shared helpers of the chat apps
//	connectors/{telegram,slack,web,terminal} (+ tgfake, slackfake)
//	config/ (+ config/testenv), cmd/leashd, deploy/
//
// Import rules, on the imports of non-test files:
//
//   - interactions imports nothing of the module (its own
//     interactions/internal/... packages aside); interactions/client
//     imports only interactions.
//   - No package under connectors/ imports anything under engine/.
//   - No package under engine/agent/ imports a connector or the engine
//     package itself (the contract in engine/agent and engine/approval are
//     theirs to use), and a driver (engine/agent/<name> and its
//     subpackages) does not import another; engine/agent/internal/... and
//     engine/agent/sandbox (where every agent process starts) are shared
//     by all.
//   - config (and config/...) imports nothing under engine/ or connectors/.
//   - Only cmd/... and engine/agent/claude/... import engine/agent/claude.
//   - engine, engine/approval and engine/agent import no driver and no
//     chat app (the connectors package, with the Connector interface, is
//     allowed).
//   - The packages of the layout above exist, and the module has no other
//     top-level folders than cmd, config, connectors, deploy, engine and
//     interactions.
//
// Naming rule: only agent drivers name Claude. Non-test .go files of the
// engine's core and adapters (not engine/agent/<driver>/ nor the test rigs
// in engine/enginetest/), interactions/ and connectors/ have no identifier
// or string literal containing "claude" (in any case) and no "Claude Code"
// anywhere, comments included.
//
// Size and doc rules, over every .go file of the module (testdata aside):
//
//   - No non-test file is over 600 lines.
//   - No function, declared or literal, is over 80 lines, in any file:
//     tests and fakes included.
//   - A doc comment on a non-test func, method or type declaration starts
//     with the declared name, optionally after "A", "An" or "The".
//
// The import rules read `go list -e -json ./...` run from the module root;
// the others parse the files with go/parser.
package archtest
