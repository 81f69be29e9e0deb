import AsyncHTTPClient
import Foundation
import HTTPTypes
import InternalProtocol
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import ServiceLifecycle

/// The caller side of the internal protocol: one AsyncHTTPClient per process, HTTP/2 over
/// mutual TLS, one multiplexed connection per peer. It passes request id, trace context,
/// remaining deadline and identity on every call, and turns failures into envelopes:
/// a peer's envelope is rethrown unchanged, an unreachable peer is 503, a missed deadline 504.
/// Run it in the process's `ServiceGroup` so it shuts down with the process.
package final class InternalClient: Service, Sendable {
    /// A peer's answer to a typed operation.
    struct RawResponse: Sendable {
        var status: Int
        var body: ByteBuffer
    }

    /// The underlying client, for tests that need raw HTTP.
    package let http: HTTPClient
    let peers: [ServiceName: String]
    /// The clients carrying lanes (no read timeout: lanes live on heartbeats), one for sockets
    /// and one for calls, so neither kind's traffic queues the other's on a connection.
    private let laneClients: [HTTPClient]
    /// The lanes carrying sockets.
    let lanes: SocketLanes
    /// The lanes carrying calls.
    let callLanes: CallLanes
    /// Largest response body accepted from a peer.
    static let maximumResponseBytes = 256 << 20

    /// Creates a client presenting `tls`'s leaf, calling peers at `peers`' base URLs. Opening a
    /// connection may take `connectTimeout`; an answer whose body stays silent for `idleRead`
    /// (after the request was sent) ends with an error.
    package init(
        tls: TLSMaterial, peers: [ServiceName: String], connectTimeout: TimeAmount = .seconds(5),
        idleRead: TimeAmount = .seconds(60)
    ) throws {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try tls.clientConfiguration())
        configuration.httpVersion = .automatic
        configuration.redirectConfiguration = .disallow
        configuration.boundReceiveBuffers()
        // No tracer is bootstrapped; the no-op spans were 2 % of the gateway's CPU per request.
        configuration.tracing.tracer = nil
        var lanesConfiguration = configuration
        lanesConfiguration.timeout = .init(connect: connectTimeout)
        // A lane that cannot connect fails at once, and the calls waiting on it with 503: with
        // retries they would wait for their deadlines (lanes have none of their own).
        lanesConfiguration.connectionPool.retryConnectionEstablishment = false
        laneClients = (0..<2).map { _ in
            HTTPClient(eventLoopGroupProvider: .singleton, configuration: lanesConfiguration)
        }
        lanes = SocketLanes(client: laneClients[0])
        callLanes = CallLanes(client: laneClients[1])
        configuration.timeout = .init(connect: connectTimeout, read: idleRead)
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.peers = peers
    }

    /// Waits for graceful shutdown, then closes every connection.
    package func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }

    /// Closes every connection, the lanes too.
    package func shutdown() async throws {
        lanes.closeAll()
        callLanes.closeAll()
        for client in laneClients { try await client.shutdown() }
        try await http.shutdown()
    }

    /// Calls a typed operation on `service`.
    package func call<Op: RPCOperation>(
        _ operation: Op.Type, _ request: Op.Request, on service: ServiceName, context: CallContext
    ) async throws -> Op.Response {
        let body = ByteBuffer(bytes: try JSONEncoder().encode(request))
        let response = try await send(
            operation: Op.name, to: service, body: body, context: context, retryOnConnectionLoss: Op.isIdempotent)
        guard (200..<300).contains(response.status) else { throw Self.envelope(from: response) }
        do {
            return try JSONDecoder().decode(Op.Response.self, from: response.body)
        } catch {
            context.logger.error("malformed internal response", metadata: ["operation": "\(Op.name)"])
            throw ErrorEnvelope.internalError
        }
    }

    private func send(
        operation: String, to service: ServiceName, body: ByteBuffer, context: CallContext,
        retryOnConnectionLoss: Bool
    ) async throws -> RawResponse {
        let request = try rpcRequest(operation, to: service, body: body, context: context)
        return try await attempt(on: service, retryingLostConnection: retryOnConnectionLoss, context: context) {
            [request] in
            try await self.execute(request, service: service, context: context)
        }
    }

    /// `POST /rpc/{operation}` on `service` with `body` as JSON and the call's context.
    func rpcRequest(_ operation: String, to service: ServiceName, body: ByteBuffer, context: CallContext) throws
        -> HTTPClientRequest
    {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        var request = HTTPClientRequest(url: "\(base)/rpc/\(operation)")
        request.method = .POST
        request.headers = try Self.contextHeaders(context)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(body)
        return request
    }

    /// Runs one call to `service`, turning failures into envelopes: a connection lost under it
    /// is tried once more when `retry` allows (idempotent calls), and is 503 otherwise.
    func attempt<Answer: Sendable>(
        on service: ServiceName, retryingLostConnection retry: Bool, context: CallContext,
        _ call: @Sendable () async throws -> Answer
    ) async throws -> Answer {
        do {
            return try await call()
        } catch let error as HTTPClientError where error == .remoteConnectionClosed && retry {
            context.logger.debug("retrying after lost connection", metadata: ["peer": "\(service.executable)"])
            do {
                return try await call()
            } catch {
                throw Self.failure(error, service: service, context: context)
            }
        } catch {
            throw Self.failure(error, service: service, context: context)
        }
    }

    private func execute(_ request: HTTPClientRequest, service: ServiceName, context: CallContext) async throws
        -> RawResponse
    {
        let response = try await http.execute(request, deadline: context.deadline, logger: context.logger)
        try Self.requireHTTP2(response, service: service, context: context)
        let body = try await response.body.collect(upTo: Self.maximumResponseBytes)
        return RawResponse(status: Int(response.status.code), body: body)
    }

    /// Internal calls travel over HTTP/2 only: anything else means a misconfigured peer (500).
    static func requireHTTP2(_ response: HTTPClientResponse, service: ServiceName, context: CallContext) throws {
        guard response.version == .http2 else {
            context.logger.error("internal call not on HTTP/2", metadata: ["peer": "\(service.executable)"])
            throw ErrorEnvelope.internalError
        }
    }

    /// The envelope for a call that failed before its answer arrived: a missed deadline is 504,
    /// an unreachable or lost peer 503.
    static func failure(_ error: any Error, service: ServiceName, context: CallContext) -> any Error {
        switch error {
        case let error as HTTPClientError where error == .deadlineExceeded:
            return ErrorEnvelope.deadlineExceeded(service)
        case let envelope as ErrorEnvelope:
            return envelope
        case is CancellationError:
            return error
        default:
            context.logger.warning(
                "internal call failed", metadata: ["peer": "\(service.executable)", "error": "\(error)"])
            return ErrorEnvelope.serviceUnavailable(service)
        }
    }

    /// The headers carrying a call's context, for AsyncHTTPClient (``contextFields(_:)``).
    static func contextHeaders(_ context: CallContext) throws -> HTTPHeaders {
        HTTPHeaders(try contextFields(context).map { ($0.name.rawName, $0.value) })
    }

    /// The headers carrying a call's context: request id, deadline, trace, client address, identity.
    static func contextFields(_ context: CallContext) throws -> HTTPFields {
        var fields = HTTPFields()
        fields.reserveCapacity(7)
        fields[.requestID] = context.requestID
        fields[.deadline] = String(context.remainingMilliseconds)
        if let traceparent = context.traceparent { fields[.traceparent] = traceparent }
        if let address = context.clientAddress { fields[.clientAddress] = address }
        if let identity = context.identity { fields[.baasIdentity] = try identity.headerValue() }
        if let version = context.catalogVersion { fields[.catalogVersion] = String(version) }
        return fields
    }

    /// The envelope in a non-2xx answer, or a 500 when the peer sent something else.
    static func envelope(from response: RawResponse) -> ErrorEnvelope {
        (try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body)) ?? .internalError
    }
}

extension InternalClient {
    /// The base URL the client calls `service` at, if it knows one.
    package func baseURL(of service: ServiceName) -> String? { peers[service] }
}

extension InternalClient {
    /// The client a process configured with `configuration` uses.
    package convenience init(tls: TLSMaterial, configuration: RuntimeConfiguration) throws {
        try self.init(
            tls: tls, peers: configuration.peers,
            connectTimeout: .milliseconds(Int64(configuration.connectTimeoutMilliseconds)))
    }
}
