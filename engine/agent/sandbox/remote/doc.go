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
// stream but one kind. The runner opens a file stream when an agent there
// sends a file to its chat (send_file, which the runner serves: the file
// is on its disk); any other stream a runner opens is a protocol
// violation (the connection is dropped). A file request is refused
// before its bytes cross (over the size limit, a name that is no base
// name, more than maxFileStreams at once), keeping the connection. The
// first stream is the control stream: the runner says
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
// rest again.
//
// A process outlives the server too (sandbox.Resumable). A driver that
// acks (Ack: the stdout bytes it handled for good) makes its process
// "acking": the server tells the runner the offset at most every
// ackEvery, and the runner keeps the output from the last ack on (not
// only a window behind what it sent), stopping the agent's stdout once
// MaxHeld bytes wait unacknowledged (paused, never killed or dropped).
// A server that shuts down lets go of each process (Detach: the last ack
// is sent, the runner stops sending and leaves the agent's stdin open).
// A server that restarted knows none of a runner's processes: the hello
// lists them with their acked offsets, and those with a chat that acked
// become orphans, counted on their runner and keeping their chat there;
// Hub.Adoptable names their chats, and Hub.Adopt reads on from the ack
// and writes on from what the agent has. An orphan not adopted within
// the grace period, and every process that never acked (the ACP driver
// does not), is ended, as before. The runner never ends an agent for
// being away from the server: only the server's word or its own stop
// does.
//
// What survives what: a broken connection, within the grace period,
// every agent, nothing lost or repeated; a server restart, the acking
// agents, from the last ack on (output read but not acked is read
// again); a runner restart, nothing.
package remote
