import NIOCore

/// One frame of a socket lane, the internal stream between the gateway and a service that
/// carries many public WebSockets at once: a socket's opening and the service's answer to it,
/// the socket's frames, credit for more of them, the end of one side of a socket, or a
/// heartbeat for the lane. On the stream a frame is a one-byte kind (the data frame's `fin` bit
/// in its top bit), the socket's four-byte number, a four-byte length and the payload.
enum LaneFrame: Sendable, Equatable {
    /// The gateway opens socket `socket` on the route at `resource` (path and query), with
    /// the call's context headers.
    case open(socket: UInt32, SocketOpening)
    /// The service took the socket.
    case accepted(socket: UInt32)
    /// The service refused the socket with an HTTP status and an envelope.
    case refused(socket: UInt32, status: Int, body: ByteBuffer)
    /// A data frame or the close of a socket.
    case frame(socket: UInt32, SocketFrame)
    /// The receiver consumed `bytes` more of the socket's frames: the sender may send as many.
    case credit(socket: UInt32, bytes: UInt32)
    /// The sender's side of the socket has ended; it sends nothing more on it.
    case finish(socket: UInt32)
    /// The lane is alive.
    case heartbeat

    private enum Control: UInt8 {
        case heartbeat = 15, open = 16, accepted = 17, refused = 18, credit = 19, finish = 20
    }

    /// The frame as it travels, appended to `buffer`.
    func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .open(let socket, let opening):
            var payload = ByteBuffer()
            opening.encode(into: &payload)
            Self.write(Control.open.rawValue, socket, payload, into: &buffer)
        case .accepted(let socket):
            Self.write(Control.accepted.rawValue, socket, ByteBuffer(), into: &buffer)
        case .refused(let socket, let status, let body):
            var payload = ByteBuffer()
            payload.writeInteger(UInt16(clamping: status))
            payload.writeImmutableBuffer(body)
            Self.write(Control.refused.rawValue, socket, payload, into: &buffer)
        case .frame(let socket, let frame):
            Self.write(frame.kind.rawValue | (frame.fin ? 0x80 : 0), socket, frame.payload, into: &buffer)
        case .credit(let socket, let bytes):
            var payload = ByteBuffer()
            payload.writeInteger(bytes)
            Self.write(Control.credit.rawValue, socket, payload, into: &buffer)
        case .finish(let socket):
            Self.write(Control.finish.rawValue, socket, ByteBuffer(), into: &buffer)
        case .heartbeat:
            Self.write(Control.heartbeat.rawValue, 0, ByteBuffer(), into: &buffer)
        }
    }

    private static func write(_ kind: UInt8, _ socket: UInt32, _ payload: ByteBuffer, into buffer: inout ByteBuffer) {
        buffer.writeInteger(kind)
        buffer.writeInteger(socket)
        buffer.writeInteger(UInt32(payload.readableBytes))
        buffer.writeImmutableBuffer(payload)
    }

    /// The frame of `kind` for `socket` carrying `payload`; nil for bytes that are no frame.
    fileprivate static func decode(kind: UInt8, socket: UInt32, payload: ByteBuffer) -> LaneFrame? {
        if let data = SocketFrame.Kind(rawValue: kind & 0x7f) {
            return .frame(socket: socket, SocketFrame(kind: data, fin: kind & 0x80 != 0, payload: payload))
        }
        var payload = payload
        switch Control(rawValue: kind) {
        case .heartbeat: return .heartbeat
        case .open: return SocketOpening(decoding: &payload).map { .open(socket: socket, $0) }
        case .accepted: return .accepted(socket: socket)
        case .refused:
            return payload.readInteger(as: UInt16.self).map { .refused(socket: socket, status: Int($0), body: payload) }
        case .credit: return payload.readInteger(as: UInt32.self).map { .credit(socket: socket, bytes: $0) }
        case .finish: return .finish(socket: socket)
        case nil: return nil
        }
    }
}

/// What the gateway sends to open a socket: the route's resource (path and query, as the
/// client asked) and the call's context headers.
struct SocketOpening: Sendable, Equatable {
    let resource: String
    let headers: [Header]

    struct Header: Sendable, Equatable {
        let name: String
        let value: String
    }

    func encode(into buffer: inout ByteBuffer) {
        Self.write(resource, into: &buffer)
        buffer.writeInteger(UInt16(clamping: headers.count))
        for header in headers.prefix(Int(UInt16.max)) {
            Self.write(header.name, into: &buffer)
            Self.write(header.value, into: &buffer)
        }
    }

    init(resource: String, headers: [Header]) {
        self.resource = resource
        self.headers = headers
    }

    init?(decoding buffer: inout ByteBuffer) {
        guard let resource = Self.read(&buffer), let count = buffer.readInteger(as: UInt16.self) else { return nil }
        var headers: [Header] = []
        for _ in 0..<count {
            guard let name = Self.read(&buffer), let value = Self.read(&buffer) else { return nil }
            headers.append(Header(name: name, value: value))
        }
        self.init(resource: resource, headers: headers)
    }

    private static func write(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(text.utf8.count))
        buffer.writeString(text)
    }

    private static func read(_ buffer: inout ByteBuffer) -> String? {
        guard let length = buffer.readInteger(as: UInt32.self) else { return nil }
        return buffer.readString(length: Int(length))
    }
}

/// Cuts lane frames out of a lane's bytes as they arrive, refusing a frame longer than
/// `maximumPayload` before buffering it.
struct LaneFrameDecoder: Sendable {
    private var pending = ByteBuffer()
    let maximumPayload: Int

    init(maximumPayload: Int) {
        self.maximumPayload = maximumPayload
    }

    mutating func append(_ bytes: ByteBuffer) {
        if pending.readableBytes == 0 {
            pending = bytes
        } else {
            var bytes = bytes
            pending.writeBuffer(&bytes)
        }
    }

    /// The next whole frame, if the bytes so far hold one.
    mutating func next() throws -> LaneFrame? {
        let start = pending.readerIndex
        guard let kind = pending.getInteger(at: start, as: UInt8.self),
            let socket = pending.getInteger(at: start + 1, as: UInt32.self),
            let length = pending.getInteger(at: start + 5, as: UInt32.self)
        else { return nil }
        guard Int(length) <= maximumPayload else { throw SocketStreamError.frameTooLarge }
        guard pending.readableBytes >= 9 + Int(length) else { return nil }
        pending.moveReaderIndex(forwardBy: 9)
        // A copy, so a frame does not keep the lane's larger buffer alive.
        var payload = ByteBuffer()
        payload.writeImmutableBuffer(pending.readSlice(length: Int(length))!)
        if pending.readableBytes == 0 {
            pending = ByteBuffer()
        } else if pending.readerIndex > 1 << 16 {
            pending.discardReadBytes()
        }
        guard let frame = LaneFrame.decode(kind: kind, socket: socket, payload: payload) else { throw SocketStreamError.malformed }
        return frame
    }
}
