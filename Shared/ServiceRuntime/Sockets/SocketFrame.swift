import InternalProtocol
import NIOCore

/// One frame of a public WebSocket as it crosses the internal stream between gateway and
/// service: the WebSocket frame's data (text, binary or continuation, with its `fin` bit), its
/// close (code and reason), or a heartbeat that keeps an idle stream alive. On the stream a
/// frame is a one-byte kind (the `fin` bit in its top bit), a four-byte length and the payload.
public struct SocketFrame: Sendable, Equatable {
    /// What a frame carries.
    public enum Kind: UInt8, Sendable {
        case continuation = 0
        case text = 1
        case binary = 2
        case close = 8
        case heartbeat = 15
    }

    /// What the frame carries.
    public var kind: Kind
    /// For data frames: whether this frame ends its message.
    public var fin: Bool
    /// The data, or for a close the code (two bytes) and reason.
    public var payload: ByteBuffer

    /// Creates a frame.
    public init(kind: Kind, fin: Bool = true, payload: ByteBuffer = ByteBuffer()) {
        self.kind = kind
        self.fin = fin
        self.payload = payload
    }

    /// A whole text message.
    public static func text(_ text: String) -> SocketFrame {
        SocketFrame(kind: .text, payload: ByteBuffer(string: text))
    }

    /// A whole binary message.
    public static func binary(_ bytes: ByteBuffer) -> SocketFrame {
        SocketFrame(kind: .binary, payload: bytes)
    }

    /// A close with `code` (RFC 6455 §7.4) and `reason`.
    public static func close(code: UInt16, reason: String = "") -> SocketFrame {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        payload.writeString(reason)
        return SocketFrame(kind: .close, payload: payload)
    }

    /// A frame that only says the other end is alive.
    public static let heartbeat = SocketFrame(kind: .heartbeat)

    /// For a close: its code, 1005 (no status) when it carries none.
    public var closeCode: UInt16 {
        payload.getInteger(at: payload.readerIndex, as: UInt16.self) ?? 1005
    }

    /// For a close: its reason.
    public var closeReason: String {
        payload.getString(at: payload.readerIndex + 2, length: max(0, payload.readableBytes - 2)) ?? ""
    }

    /// For a text frame: its text.
    public var text: String? {
        kind == .text ? String(buffer: payload) : nil
    }

    /// The frame as it travels.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(5 + payload.readableBytes)
        buffer.writeInteger(kind.rawValue | (fin ? 0x80 : 0))
        buffer.writeInteger(UInt32(payload.readableBytes))
        var payload = payload
        buffer.writeBuffer(&payload)
        return buffer
    }
}

/// Cuts frames out of the bytes of an internal stream as they arrive, refusing a frame longer
/// than the route allows before buffering it.
public struct SocketFrameDecoder: Sendable {
    private var pending = ByteBuffer()
    /// The longest payload accepted.
    public let maximumPayload: Int

    /// A decoder accepting payloads up to `maximumPayload` bytes.
    public init(maximumPayload: Int) {
        self.maximumPayload = maximumPayload
    }

    /// Takes more bytes of the stream.
    public mutating func append(_ bytes: ByteBuffer) {
        var bytes = bytes
        pending.writeBuffer(&bytes)
    }

    /// The next whole frame, if the bytes so far hold one.
    public mutating func next() throws -> SocketFrame? {
        guard let header = pending.getInteger(at: pending.readerIndex, as: UInt8.self),
            let length = pending.getInteger(at: pending.readerIndex + 1, as: UInt32.self)
        else { return nil }
        guard let kind = SocketFrame.Kind(rawValue: header & 0x7f) else { throw SocketStreamError.malformed }
        guard Int(length) <= maximumPayload else { throw SocketStreamError.frameTooLarge }
        guard pending.readableBytes >= 5 + Int(length) else { return nil }
        pending.moveReaderIndex(forwardBy: 5)
        // A copy, so a frame does not keep the stream's larger buffer alive.
        var payload = ByteBuffer()
        payload.writeImmutableBuffer(pending.readSlice(length: Int(length))!)
        if pending.readableBytes == 0 {
            pending.clear()
        } else if pending.readerIndex > 1 << 16 {
            pending.discardReadBytes()
        }
        return SocketFrame(kind: kind, fin: header & 0x80 != 0, payload: payload)
    }
}

/// Why an internal socket stream ended abnormally.
public enum SocketStreamError: Error, Sendable, Equatable {
    /// Bytes that are no frame.
    case malformed
    /// A frame over the route's limit.
    case frameTooLarge
    /// Nothing arrived, not even a heartbeat, within the idle timeout.
    case idle
}
