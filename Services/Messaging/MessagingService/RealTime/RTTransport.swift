import NIOCore
import ServiceRuntime

/// What a real-time session receives from its client.
enum RTIncoming: Sendable {
    /// One Engine.IO packet.
    case text(String)
    /// The client closed, or was lost.
    case closed
    /// The client sent what is not an Engine.IO packet (a binary frame).
    case unreadable
    /// Not from the client: its user's sessions or roles changed (``RTRevocations``), so the
    /// connection looks its identity up again, in turn with what the client sends.
    case reauthorize

    /// A WebSocket's frame as a session receives it: a close, or the end of the client's side,
    /// ends the session.
    init(_ frame: SocketFrame?) {
        guard let frame, frame.kind != .close else {
            self = .closed
            return
        }
        self = frame.kind == .text ? .text(String(buffer: frame.payload)) : .unreadable
    }
}

/// How a session writes to its client: a WebSocket, or the answers to long-polling GETs.
protocol RTWriter: Sendable {
    /// Sends one Engine.IO packet; false when it could not be (the transport has closed).
    func send(_ text: String) async -> Bool
    /// Ends the transport: a WebSocket close with `code` and `reason`, or a polling session's end.
    func close(code: UInt16, reason: String) async
}

extension SocketOutbound: RTWriter {
    func send(_ text: String) async -> Bool {
        await send(.text(text))
    }
}
