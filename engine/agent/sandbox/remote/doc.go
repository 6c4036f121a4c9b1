// Package remote runs agent processes on other machines: runners
// (`leashd runner`) dial out to the leashd server, and the server starts
// agents on them through a sandbox.Sandbox whose processes' standard
// streams are streams of that one connection. The drivers (claude, acp)
// are unchanged: they start a Spec and speak their stdio protocol to a
// Process, wherever it runs.
//
// Why a WebSocket with yamux on top: a runner behind NAT, in a container
// or a pod needs no inbound port, and one outbound HTTPS connection passes
// the proxies and ingresses that a raw TCP port or HTTP/2 gRPC often does
// not (coder/websocket gives a net.Conn over it). yamux, a small and
// long-used multiplexer (Consul, Nomad, Vault), gives every agent its own
// flow-controlled streams, so a flooding agent fills only its own window
// and never stalls another agent or the control stream; gRPC would need
// HTTP/2 end to end and generated code for what is a byte pipe.
//
// On one connection the server is the yamux client: it opens every
// stream, and a runner that opens one is a protocol violation (it is
// dropped). The first stream is the control stream: the runner says
// hello (name, labels, capacity, the processes it still holds), the
// server answers welcome, and then both send small JSON lines on it
// (signals and ends one way, exits the other). Each agent process has an
// io stream (the server writes the agent's stdin, reads its stdout) and a
// stderr stream. Every line read from the other side is bounded
// (maxLine); the yamux window bounds the data in flight per stream.
//
// A process outlives its connection. The runner keeps every agent
// running while the server is away and holds what it writes (up to
// MaxHeld bytes, then it stops reading the agent's stdout, so nothing is
// dropped); the server keeps the Process for the grace period. When the
// runner connects again it lists its processes in its hello, and the
// server re-attaches each one it still has: it opens a new io stream
// saying how many stdout bytes it has read, the runner continues from
// there and says how many stdin bytes it got, and the server sends the
// rest again. A process the server no longer has (it restarted) is left
// running on the runner, listed in the hello, ready for a later attach.
package remote
