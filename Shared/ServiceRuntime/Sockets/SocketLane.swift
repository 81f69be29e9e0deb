import NIOCore
import Synchronization

/// How socket lanes stay alive.
package enum SocketLaneTiming {
    /// How often an end that has sent nothing sends a heartbeat.
    package static let heartbeatInterval = Duration.seconds(10)
    /// How long an end waits for anything from the other before it gives the lane up (and
    /// every socket on it).
    package static let idleLimit = Duration.seconds(45)
}

/// One internal stream between the gateway and a service carrying many public WebSockets
/// (``LaneFrame``), at either end: the lane's sockets by number, the bytes it sends, and the
/// reading of the other end's frames. A socket costs its state here, not a stream and the
/// tasks serving one. When the lane ends, every socket on it is lost.
final class SocketLane: LaneEnd {
    /// Called for each socket the other end opens (the service's end).
    typealias Opened = @Sendable (UInt32, SocketOpening, SocketLane) -> Void

    /// The number that stands for the lane in a finish: the lane ends.
    static let laneItself: UInt32 = 0

    /// What this end sends.
    let writer = LaneWriter<LaneFrame>()
    let maximumPayload: Int
    private let table = Mutex(LaneTable<LaneSocket>())
    private let heard = SocketLiveness()

    private let opened: Opened

    /// A lane accepting frames of up to `maximumPayload` bytes, calling `opened` for each
    /// socket the other end opens.
    init(maximumPayload: Int, opened: @escaping Opened = { _, _, _ in }) {
        self.maximumPayload = maximumPayload
        self.opened = opened
    }

    /// How many sockets are on the lane.
    var count: Int { table.withLock { $0.count } }

    /// Whether the lane has ended.
    var isClosed: Bool { table.withLock { $0.isClosed } }

    /// A new socket, opened with `opening` (the gateway's end); nil once the lane has ended.
    func open(_ opening: SocketOpening) -> LaneSocket? {
        let socket = table.withLock { $0.open { LaneSocket(id: $0, lane: self) } }
        if let socket { writer.enqueue(.open(socket: socket.id, opening)) }
        return socket
    }

    /// The socket the other end opened as `id` (the service's end); nil when the number is
    /// taken or the lane has ended.
    func accept(_ id: UInt32) -> LaneSocket? {
        let socket = LaneSocket(id: id, lane: self)
        return table.withLock { $0.accept(socket, as: id) } ? socket : nil
    }

    /// Takes socket `id` off the lane (both ends finished, or it was refused).
    func remove(_ id: UInt32) {
        if table.withLock({ $0.remove(id).lastLeft }) { close() }
    }

    /// Reads the other end's frames from `bytes` until the lane ends, handing each to its
    /// socket; `opened` is called for each socket the other end opens.
    func read<Bytes: AsyncSequence>(_ bytes: Bytes, opened: (UInt32, SocketOpening) -> Void = { _, _ in }) async throws
    where Bytes.Element == ByteBuffer {
        try await dispatchFrames(from: bytes, maximumPayload: maximumPayload, heard: heard) {
            dispatch($0, opened: opened)
        }
    }

    func readFrames<Bytes: AsyncSequence>(from bytes: Bytes) async throws where Bytes.Element == ByteBuffer {
        try await read(bytes) { id, opening in opened(id, opening, self) }
    }

    private func dispatch(_ frame: LaneFrame, opened: (UInt32, SocketOpening) -> Void) {
        switch frame {
        case .open(let id, let opening): opened(id, opening)
        case .accepted(let id): socket(id)?.answered(.accepted)
        case .refused(let id, let status, let body):
            socket(id)?.answered(.refused(status: status, body: body))
            remove(id)
        case .frame(let id, let data):
            if let socket = socket(id) {
                socket.received(data)
            } else {
                writer.enqueue(.credit(socket: id, bytes: UInt32(LaneSocket.cost(data))))
            }
        case .credit(let id, let bytes): socket(id)?.credited(Int(bytes))
        case .finish(Self.laneItself): close()
        case .finish(let id): socket(id)?.peerEnded()
        case .heartbeat: break
        }
    }

    private func socket(_ id: UInt32) -> LaneSocket? {
        table.withLock { $0[id] }
    }

    /// Keeps the lane alive (``LaneKeepAlive``) until it ends or the task is cancelled.
    func keepAlive() async throws {
        defer { close() }
        try await LaneKeepAlive.run(heard: heard, writer: writer, heartbeat: LaneFrame.heartbeat) { isClosed }
    }

    /// Closes the lane once its last socket has left, refusing new ones meanwhile; sockets no
    /// task serves are told to close.
    func drain() {
        let (close, sockets) = table.withLock { ($0.drain(), Array($0.entries.values)) }
        if close { self.close() }
        for socket in sockets { socket.shutDown() }
    }

    /// Whether the lane is closing once its sockets have left.
    var isDraining: Bool { table.withLock { $0.isDraining } }

    /// Ends the lane: what is pending still goes, with the lane's end (a finish of socket 0)
    /// so the other end closes its side too; every socket on it is lost.
    func close() {
        guard let sockets = table.withLock({ $0.close() }) else { return }
        writer.enqueue(.finish(socket: Self.laneItself))
        writer.finish()
        for socket in sockets { socket.peerEnded(lost: true) }
    }
}
