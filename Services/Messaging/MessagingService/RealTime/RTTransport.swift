import Hummingbird
import ServiceRuntime

/// What a real-time session reads from its client.
enum RTIncoming {
    /// One Engine.IO packet.
    case text(String)
    /// The client closed, or was lost.
    case closed
    /// The client sent what is not an Engine.IO packet (a binary frame).
    case unreadable
}

/// How a session reads its client: a WebSocket's frames, or the packets of long-polling POSTs.
/// Used by the session's reading task only.
protocol RTReader {
    mutating func next() async -> RTIncoming
}

/// How a session writes to its client: a WebSocket, or the answers to long-polling GETs.
protocol RTWriter: Sendable {
    /// Sends one Engine.IO packet; false when it could not be (the transport has closed).
    func send(_ text: String) async -> Bool
    /// Ends the transport: a WebSocket close with `code` and `reason`, or a polling session's end.
    func close(code: UInt16, reason: String) async
}

/// A WebSocket's frames as a session reads them.
struct SocketReader: RTReader {
    let inbound: SocketInbound

    mutating func next() async -> RTIncoming {
        // A lost stream ends the connection as a close does.
        guard let frame = try? await inbound.next(), frame.kind != .close else { return .closed }
        return frame.kind == .text ? .text(String(buffer: frame.payload)) : .unreadable
    }
}

extension SocketOutbound: RTWriter {
    func send(_ text: String) async -> Bool {
        await send(.text(text))
    }
}
