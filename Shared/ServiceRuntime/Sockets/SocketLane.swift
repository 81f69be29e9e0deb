import NIOCore
import Synchronization

/// How socket lanes stay alive.
public enum SocketLaneTiming {
    /// How often an end that has sent nothing sends a heartbeat.
    public static let heartbeatInterval = Duration.seconds(10)
    /// How long an end waits for anything from the other before it gives the lane up (and
    /// every socket on it).
    public static let idleLimit = Duration.seconds(45)
}

/// One internal stream between the gateway and a service carrying many public WebSockets
/// (``LaneFrame``), at either end: the lane's sockets by number, the bytes it sends, and the
/// reading of the other end's frames. A socket costs its state here, not a stream and the
/// tasks serving one. When the lane ends, every socket on it is lost.
final class SocketLane: Sendable {
    static let heartbeatInterval = SocketLaneTiming.heartbeatInterval
    static let idleLimit = SocketLaneTiming.idleLimit

    private struct Table {
        var sockets: [UInt32: LaneSocket] = [:]
        var nextID: UInt32 = 1
        var closed = false
        /// Closing once the last socket leaves (the process is shutting down).
        var draining = false
    }

    /// The number that stands for the lane in a finish: the lane ends.
    static let laneItself: UInt32 = 0

    /// What this end sends.
    let writer = LaneWriter()
    let maximumPayload: Int
    private let table = Mutex(Table())
    private let heard = SocketLiveness()

    /// A lane accepting frames of up to `maximumPayload` bytes.
    init(maximumPayload: Int) {
        self.maximumPayload = maximumPayload
    }

    /// How many sockets are on the lane.
    var count: Int { table.withLock { $0.sockets.count } }

    /// Whether the lane has ended.
    var isClosed: Bool { table.withLock { $0.closed } }

    /// A new socket, opened with `opening` (the gateway's end); nil once the lane has ended.
    func open(_ opening: SocketOpening) -> LaneSocket? {
        let socket: LaneSocket? = table.withLock { table in
            guard !table.closed else { return nil }
            var id = table.nextID
            while table.sockets[id] != nil || id == 0 { id &+= 1 }
            table.nextID = id &+ 1
            let socket = LaneSocket(id: id, lane: self)
            table.sockets[id] = socket
            return socket
        }
        if let socket { writer.enqueue(.open(socket: socket.id, opening)) }
        return socket
    }

    /// The socket the other end opened as `id` (the service's end); nil when the number is
    /// taken or the lane has ended.
    func accept(_ id: UInt32) -> LaneSocket? {
        table.withLock { table in
            guard !table.closed, table.sockets[id] == nil else { return nil }
            let socket = LaneSocket(id: id, lane: self)
            table.sockets[id] = socket
            return socket
        }
    }

    /// Takes socket `id` off the lane (both ends finished, or it was refused).
    func remove(_ id: UInt32) {
        let close = table.withLock { table in
            table.sockets[id] = nil
            return table.draining && table.sockets.isEmpty
        }
        if close { self.close() }
    }

    /// Reads the other end's frames from `bytes` until the lane ends, handing each to its
    /// socket; `opened` is called for each socket the other end opens.
    func read<Bytes: AsyncSequence>(_ bytes: Bytes, opened: (UInt32, SocketOpening) -> Void = { _, _ in }) async throws
    where Bytes.Element == ByteBuffer {
        defer { close() }
        var decoder = LaneFrameDecoder(maximumPayload: maximumPayload)
        for try await chunk in bytes {
            heard.received()
            decoder.append(chunk)
            while let frame = try decoder.next() { dispatch(frame, opened: opened) }
        }
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
        table.withLock { $0.sockets[id] }
    }

    /// Sends a heartbeat whenever this end has sent nothing for ``heartbeatInterval``; ends
    /// the lane once nothing has arrived for ``idleLimit``. Runs until the lane ends or the
    /// task is cancelled.
    func keepAlive() async throws {
        defer { close() }
        while !isClosed {
            try await Task.sleep(for: Self.heartbeatInterval)
            if heard.sinceReceived > Self.idleLimit { throw SocketStreamError.idle }
            if writer.sinceSent >= Self.heartbeatInterval { writer.enqueue(.heartbeat) }
        }
    }

    /// Closes the lane once its last socket has left, refusing new ones meanwhile; sockets no
    /// task serves are told to close.
    func drain() {
        let (close, sockets) = table.withLock { table in
            table.draining = true
            return (table.sockets.isEmpty, Array(table.sockets.values))
        }
        if close { self.close() }
        for socket in sockets { socket.shutDown() }
    }

    /// Whether the lane is closing once its sockets have left.
    var isDraining: Bool { table.withLock { $0.draining } }

    /// Ends the lane: what is pending still goes, with the lane's end (a finish of socket 0)
    /// so the other end closes its side too; every socket on it is lost.
    func close() {
        let sockets: [LaneSocket]? = table.withLock { table in
            guard !table.closed else { return nil }
            table.closed = true
            defer { table.sockets = [:] }
            return Array(table.sockets.values)
        }
        guard let sockets else { return }
        writer.enqueue(.finish(socket: Self.laneItself))
        writer.finish()
        for socket in sockets { socket.peerEnded(lost: true) }
    }
}
