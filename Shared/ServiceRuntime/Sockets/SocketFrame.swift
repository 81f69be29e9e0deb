import InternalProtocol
import NIOCore

/// One frame of a public WebSocket as it crosses a socket lane between gateway and service
/// (``LaneFrame``): the WebSocket frame's data (text, binary or continuation, with its `fin`
/// bit), or its close (code and reason).
package struct SocketFrame: Sendable, Equatable {
    /// What a frame carries.
    package enum Kind: UInt8, Sendable {
        case continuation = 0
        case text = 1
        case binary = 2
        case close = 8
    }

    /// What the frame carries.
    package var kind: Kind
    /// For data frames: whether this frame ends its message.
    package var fin: Bool
    /// The data, or for a close the code (two bytes) and reason.
    package var payload: ByteBuffer

    /// Creates a frame.
    package init(kind: Kind, fin: Bool = true, payload: ByteBuffer = ByteBuffer()) {
        self.kind = kind
        self.fin = fin
        self.payload = payload
    }

    /// A whole text message.
    package static func text(_ text: String) -> SocketFrame {
        SocketFrame(kind: .text, payload: ByteBuffer(string: text))
    }

    /// A whole binary message.
    package static func binary(_ bytes: ByteBuffer) -> SocketFrame {
        SocketFrame(kind: .binary, payload: bytes)
    }

    /// A close with `code` (RFC 6455 §7.4) and `reason`.
    package static func close(code: UInt16, reason: String = "") -> SocketFrame {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        payload.writeString(reason)
        return SocketFrame(kind: .close, payload: payload)
    }

    /// For a close: its code, 1005 (no status) when it carries none.
    package var closeCode: UInt16 {
        payload.getInteger(at: payload.readerIndex, as: UInt16.self) ?? 1005
    }

    /// For a close: its reason.
    package var closeReason: String {
        payload.getString(at: payload.readerIndex + 2, length: max(0, payload.readableBytes - 2)) ?? ""
    }

    /// For a text frame: its text.
    package var text: String? {
        kind == .text ? String(buffer: payload) : nil
    }
}

/// Why an internal socket stream ended abnormally.
package enum SocketStreamError: Error, Sendable, Equatable {
    /// Bytes that are no frame.
    case malformed
    /// A frame over the route's limit.
    case frameTooLarge
    /// Nothing arrived, not even a heartbeat, within the idle timeout.
    case idle
}
