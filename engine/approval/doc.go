// Package approval turns what an agent asks for into what a person is
// asked, and a person's answer into what the agent reads: AskUserQuestion
// into questions, ExitPlanMode into a plan review, any other tool call into
// a tool approval (with the agent's own options when it gave them), an MCP
// elicitation form into questions, and each resolution back into a
// permission response. It holds no state of a chat or an engine: the engine
// decides when to ask (modes, session rules, policy, quorum) and calls these
// functions to build the interaction and read the answer.
package approval
