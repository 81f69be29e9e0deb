import Hummingbird
import HummingbirdHTTP2
import InternalProtocol
import Logging
import NIOCore
import PostgresSupport

/// The internal server of a backend over HTTP/2 with TLS 1.3 and a required client certificate
/// (HTTP/1.1 remains possible over the same TLS, for tools): `POST /rpc/{operation}` for typed
/// operations, the service's public routes at their public paths, passed through by the gateway,
/// and call lanes (``CallLaneServer``) on which a peer sends many of those requests at once.
package enum RPCServer {
    /// The application type the builder returns, so callers can add start-up work.
    package typealias App = Application<RouterResponder<RPCRequestContext>>

    /// Builds the internal server.
    package static func make(
        service: ServiceName, host: String, port: Int, tls: TLSMaterial, registry: OperationRegistry,
        routes: PublicRoutes, ports: BoundPorts, defaultTimeout: TimeAmount,
        filesPublicURL: String = "http://localhost:8080",
        health: DatabaseHealth? = nil, logger: Logger
    ) throws -> App {
        let edge = RPCEdgeMiddleware(defaultTimeout: defaultTimeout, filesPublicURL: filesPublicURL)
        let router = Self.router(edge)
        router.post("/rpc/:operation") { request, context in
            let operation = try context.parameters.require("operation")
            // Operations other than the system's need the database: refused at once without it.
            if let health, !health.isReachable, !operation.hasPrefix("system.") {
                throw ErrorEnvelope.databaseUnavailable
            }
            return try await registry.respond(to: request, operation: operation, context: context)
        }
        // Calls on lanes run through a router of the buffered public routes alone: matched once,
        // through the edge once per call (the lane's own request went through it once).
        let callRouter = Self.router(edge)
        routes.registerCalls(on: callRouter, health: health)
        let calls = CallLaneServer(responder: callRouter.buildResponder())
        router.get(RouterPath(CallLaneServer.path)) { request, context in calls.response(request, context: context) }
        routes.register(on: router, health: health)
        return Application(
            responder: router.buildResponder(),
            server: try .http2Upgrade(tlsConfiguration: tls.serverConfiguration()),
            configuration: .init(address: .hostname(host, port: port), serverName: service.executable),
            onServerRunning: { channel in await ports.bound(.rpc, channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// A router with the internal edge: metrics, then ``RPCEdgeMiddleware``.
    private static func router(_ edge: RPCEdgeMiddleware) -> Router<RPCRequestContext> {
        let router = Router(context: RPCRequestContext.self)
        router.middlewares.add(MetricsMiddleware())
        router.middlewares.add(edge)
        return router
    }
}
