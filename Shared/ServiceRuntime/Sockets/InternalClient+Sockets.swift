import AsyncHTTPClient
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// One public WebSocket's socket on a lane to its service, open: the service's frames are
/// pushed to the gateway as they arrive, the client's go out as the window allows.
package struct InternalSocket: Sendable {
    private let socket: LaneSocket
    private let lease: SocketLanes.Lease

    init(socket: LaneSocket, lease: SocketLanes.Lease) {
        self.socket = socket
        self.lease = lease
    }

    /// Hands each frame the service sends to `sink` as it arrives, and nil once the service
    /// has ended its side (or the lane ended). The frame's credit returns when the sink calls
    /// `done`: a sink that calls it once the client's write completes lets at most the socket's
    /// window wait on a slow client. No task waits on an idle socket.
    package func push(to sink: @escaping @Sendable (SocketFrame?, _ done: @escaping @Sendable () -> Void) -> Void) {
        socket.push(to: sink)
    }

    /// Sends the client's `frame` now if the socket's window has room, without waiting: true
    /// when sent, false when there is no room (``whenRoom(_:)`` says when to try again), nil
    /// when the socket has ended. For one caller at a time.
    package func trySend(_ frame: SocketFrame) -> Bool? {
        socket.trySend(frame)
    }

    /// Calls `waiter` once, when the service next returns credit or the socket ends.
    package func whenRoom(_ waiter: @escaping @Sendable () -> Void) {
        socket.whenRoom(waiter)
    }

    /// Ends the gateway's side: the client sends nothing more.
    package func finish() {
        socket.finish()
    }

    /// Ends the gateway's side, stops reading and frees the socket's place on its lane.
    package func release() {
        socket.abandon()
        lease.release()
    }
}

extension InternalClient {
    /// Opens a public WebSocket on `route` of `service`: a socket on a lane to the service (see
    /// ``SocketLane``) carrying the route's path and the call's context. The service's refusal
    /// is thrown as its envelope; the call's deadline bounds the opening only.
    package func openSocket(
        _ request: Request, resource: String, route: RouteDescriptor, to service: ServiceName, context: CallContext
    ) async throws -> InternalSocket {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        let fields = try Self.contextFields(context)
        try PassthroughHeaders.checkSize(fields, target: "/\(resource)\(query)")
        let opening = SocketOpening(
            resource: resource + query,
            headers: fields.map { SocketOpening.Header(name: $0.name.rawName, value: $0.value) })
        let (socket, lease) = try lanes.open(opening, service: service, base: base, logger: context.logger)
        let answer: LaneSocket.Answer
        do {
            answer = try await withTimeout(.milliseconds(context.remainingMilliseconds)) { await socket.answer() }
        } catch {
            socket.abandon()
            lease.release()
            throw ErrorEnvelope.deadlineExceeded(service)
        }
        switch answer {
        case .accepted:
            return InternalSocket(socket: socket, lease: lease)
        case .refused(let status, let body):
            lease.release()
            throw Self.envelope(from: RawResponse(status: status, body: body))
        case .lost:
            lease.release()
            throw ErrorEnvelope.serviceUnavailable(service)
        }
    }
}

/// The gateway's lanes to each service, on the lanes' HTTP client: at most ``socketsPerLane`` sockets on
/// each, a new lane opened when all are full, a lane that ended replaced by the next opening.
final class SocketLanes: Sendable {
    /// A socket's place on a lane.
    final class Lease: Sendable {
        private let lane: SocketLane
        private let lanes: SocketLanes
        private let service: ServiceName
        private let released = Atomic<Bool>(false)

        fileprivate init(lane: SocketLane, service: ServiceName, lanes: SocketLanes) {
            self.lane = lane
            self.service = service
            self.lanes = lanes
        }

        /// Frees the place; later calls do nothing.
        func release() {
            guard !released.exchange(true, ordering: .relaxed) else { return }
            lanes.release(lane, service: service)
        }
    }

    private struct Entry {
        let lane: SocketLane
        var open = 0
    }

    /// Sockets per lane.
    static let socketsPerLane = 1_000
    /// The most lanes per service, so the most sockets per service is 1,000 × 64.
    static let maximumLanes = 64

    private let client: HTTPClient
    private let entries = Mutex<[ServiceName: [Entry]]>([:])

    /// Lanes opened on `client`, which the caller shuts down.
    init(client: HTTPClient) {
        self.client = client
    }

    /// Opens a socket with `opening` on a lane to `service` with room, opening a lane when none has.
    func open(_ opening: SocketOpening, service: ServiceName, base: String, logger: Logger) throws -> (
        LaneSocket, Lease
    ) {
        let (lane, isNew) = try entries.withLock { entries in
            var lanes = entries[service, default: []].filter { !$0.lane.isClosed }
            defer { entries[service] = lanes }
            if let index = lanes.firstIndex(where: { $0.open < Self.socketsPerLane }) {
                lanes[index].open += 1
                return (lanes[index].lane, false)
            }
            guard lanes.count < Self.maximumLanes else { throw ErrorEnvelope.serviceUnavailable(service) }
            let lane = SocketLane(maximumPayload: 64 << 20)
            lanes.append(Entry(lane: lane, open: 1))
            return (lane, true)
        }
        if isNew { lane.open(url: base + SocketLaneServer.path, client: client, logger: logger) }
        guard let socket = lane.open(opening) else { throw ErrorEnvelope.serviceUnavailable(service) }
        return (socket, Lease(lane: lane, service: service, lanes: self))
    }

    fileprivate func release(_ lane: SocketLane, service: ServiceName) {
        entries.withLock { entries in
            guard let index = entries[service]?.firstIndex(where: { $0.lane === lane }) else { return }
            entries[service]![index].open -= 1
        }
    }

    /// Ends every lane.
    func closeAll() {
        for lane in entries.withLock({ $0.values.flatMap { $0.map(\.lane) } }) { lane.close() }
    }
}
