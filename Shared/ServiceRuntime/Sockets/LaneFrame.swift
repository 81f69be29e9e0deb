import NIOCore

/// One frame of a socket lane, the internal stream between the gateway and a service that
/// carries many public WebSockets at once: a socket's opening and the service's answer to it,
/// the socket's frames, credit for more of them, the end of one side of a socket, or a
/// heartbeat for the lane. A data frame's kind carries its `fin` bit in its top bit.
enum LaneFrame: LaneFrameCoding, Equatable {
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
            Self.write(Control.open.rawValue, socket, into: &buffer) { opening.encode(into: &$0) }
        case .accepted(let socket):
            Self.write(Control.accepted.rawValue, socket, into: &buffer)
        case .refused(let socket, let status, let body):
            Self.write(Control.refused.rawValue, socket, into: &buffer) {
                $0.writeInteger(UInt16(clamping: status))
                $0.writeImmutableBuffer(body)
            }
        case .frame(let socket, let frame):
            Self.write(frame.kind.rawValue | (frame.fin ? 0x80 : 0), socket, into: &buffer) {
                $0.writeImmutableBuffer(frame.payload)
            }
        case .credit(let socket, let bytes):
            Self.write(Control.credit.rawValue, socket, into: &buffer) { $0.writeInteger(bytes) }
        case .finish(let socket):
            Self.write(Control.finish.rawValue, socket, into: &buffer)
        case .heartbeat:
            Self.write(Control.heartbeat.rawValue, 0, into: &buffer)
        }
    }

    /// The frame of `kind` for socket `number` carrying `payload`; nil for bytes that are no frame.
    static func decode(kind: UInt8, number socket: UInt32, payload: ByteBuffer) -> LaneFrame? {
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
        LaneText.write(resource, into: &buffer)
        LaneText.write(headers.map { ($0.name, $0.value) }, into: &buffer)
    }

    init(resource: String, headers: [Header]) {
        self.resource = resource
        self.headers = headers
    }

    init?(decoding buffer: inout ByteBuffer) {
        guard let resource = LaneText.read(&buffer), let headers = LaneText.readHeaders(&buffer) else { return nil }
        self.init(resource: resource, headers: headers.map { Header(name: $0.name, value: $0.value) })
    }
}
