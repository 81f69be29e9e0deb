import AsyncHTTPClient
import Hummingbird
import InternalProtocol
import NIOCore
import NIOHTTP1
import Synchronization

/// One public WebSocket's stream to its service, open: the service's frames arrive on `body`,
/// the client's go out on `outbound`.
public struct InternalSocket: Sendable {
    /// The service's side of the stream.
    public let body: HTTPClientResponse.Body
    /// The gateway's side of the stream.
    public let outbound: SocketOutbound
    private let lease: SocketLanes.Lease

    init(body: HTTPClientResponse.Body, outbound: SocketOutbound, lease: SocketLanes.Lease) {
        self.body = body
        self.outbound = outbound
        self.lease = lease
    }

    /// Ends the gateway's side and frees the stream's place on its lane.
    public func release() {
        outbound.finish()
        lease.release()
    }
}

extension InternalClient {
    /// Opens the internal stream of a public WebSocket on `route` of `service`: a `GET` of the
    /// route's path carrying the call's context, whose request and answer bodies stay open for
    /// frames both ways, on a lane apart from the calls' connection. The service's refusal is
    /// thrown as its envelope.
    public func openSocket(
        _ request: Request, resource: String, route: RouteDescriptor, to service: ServiceName, context: CallContext
    ) async throws -> InternalSocket {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        var outgoing = HTTPClientRequest(url: "\(base)/\(resource)\(query)")
        outgoing.method = .GET
        outgoing.headers = try Self.contextHeaders(context)
        try PassthroughHeaders.checkSize(outgoing.headers, target: "/\(resource)\(query)")
        let outbound = SocketOutbound()
        outgoing.body = .stream(outbound.bytes, length: .unknown)
        let lease = try lanes.lease(service: service)
        do {
            // The call's deadline bounds the opening only; the open stream lives on heartbeats.
            let answer = try await withTimeout(.milliseconds(context.remainingMilliseconds)) { [outgoing] in
                try await self.attempt(on: service, retryingLostConnection: false, context: context) {
                    try await lease.client.execute(outgoing, deadline: .distantFuture, logger: context.logger)
                }
            }
            guard (200..<300).contains(answer.status.code) else {
                outbound.finish()
                let body = try await answer.body.collect(upTo: 1 << 20)
                throw Self.envelope(from: RawResponse(status: Int(answer.status.code), body: body))
            }
            return InternalSocket(body: answer.body, outbound: outbound, lease: lease)
        } catch is TimeoutError {
            outbound.finish()
            lease.release()
            throw ErrorEnvelope.deadlineExceeded(service)
        } catch {
            outbound.finish()
            lease.release()
            throw error
        }
    }
}

/// The HTTP clients carrying sockets, apart from the calls' client: AsyncHTTPClient keeps one
/// HTTP/2 connection per peer and queues requests beyond its 100 concurrent streams, so
/// long-lived sockets there would starve the calls. Each lane is a client of its own (so a
/// connection of its own per peer) holding at most ``streamsPerLane`` sockets.
final class SocketLanes: Sendable {
    /// A socket's place on a lane.
    final class Lease: Sendable {
        let client: HTTPClient
        private let lane: Int
        private let service: ServiceName
        private let lanes: SocketLanes
        private let released = Atomic<Bool>(false)

        fileprivate init(client: HTTPClient, lane: Int, service: ServiceName, lanes: SocketLanes) {
            self.client = client
            self.lane = lane
            self.service = service
            self.lanes = lanes
        }

        /// Frees the place; later calls do nothing.
        func release() {
            guard !released.exchange(true, ordering: .relaxed) else { return }
            lanes.release(lane: lane, service: service)
        }
    }

    private struct Lane {
        let client: HTTPClient
        var open: [ServiceName: Int] = [:]
    }

    /// Sockets per lane and peer, below the services' 100 concurrent HTTP/2 streams.
    static let streamsPerLane = 90
    /// The most lanes, so the most sockets per peer is 90 × 200.
    static let maximumLanes = 200

    private let configuration: HTTPClient.Configuration
    private let lanes = Mutex<[Lane]>([])

    init(configuration: HTTPClient.Configuration) {
        self.configuration = configuration
    }

    /// A place for one more socket to `service`: on the first lane with room, else a new lane.
    func lease(service: ServiceName) throws -> Lease {
        try lanes.withLock { lanes in
            let index: Int
            if let free = lanes.firstIndex(where: { $0.open[service, default: 0] < Self.streamsPerLane }) {
                index = free
            } else {
                guard lanes.count < Self.maximumLanes else { throw ErrorEnvelope.serviceUnavailable(service) }
                lanes.append(Lane(client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)))
                index = lanes.count - 1
            }
            lanes[index].open[service, default: 0] += 1
            return Lease(client: lanes[index].client, lane: index, service: service, lanes: self)
        }
    }

    fileprivate func release(lane: Int, service: ServiceName) {
        lanes.withLock { $0[lane].open[service, default: 1] -= 1 }
    }

    /// Shuts every lane's client down.
    func shutdown() async throws {
        for client in lanes.withLock({ $0.map(\.client) }) { try await client.shutdown() }
    }
}
