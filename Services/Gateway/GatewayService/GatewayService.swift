import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import PostgresNIO
import PostgresSupport
import ServiceRuntime

/// The public gateway: one HTTP port for every client, API-key check, identity, routing by the
/// services' route manifests, streaming passthrough to the owning service over the internal
/// protocol, body limits, CORS and request ids.
package enum GatewayService {
    /// Assembles the gateway process: internal client, manifest loader, public server and
    /// operations server. It routes by the manifests of `services` (every backend by default).
    package static func parts(
        runtime: RuntimeConfiguration, configuration: GatewayConfiguration, tls: TLSMaterial, logger: Logger,
        services: [ServiceName] = ServiceName.backends
    ) throws -> ServiceParts {
        let ports = BoundPorts()
        let peers = try InternalClient(tls: tls, configuration: runtime)
        // The gateway's only database use: two connections listening for session and catalog changes.
        var listening = runtime.database
        listening.maximumConnections = 2
        let database = PostgresClient(listening, logger: logger)
        let sessions = SessionCache(lifetime: .seconds(configuration.sessionCacheSeconds))
        let listener = NotificationListener(
            database: database, channel: SessionsChannel.name, consumer: sessions, logger: logger)
        let gate = PermissionGate(peers: peers)
        let catalogListener = NotificationListener(
            database: database, channel: CatalogChannel.name, consumer: gate, logger: logger)
        let readiness = ServiceReadiness(
            peers: peers, deadline: .milliseconds(Int64(configuration.infoDeadlineMilliseconds)))
        var controller = GatewayController(
            resolver: AppResolver(
                peers: peers, cache: APIKeyCache(lifetime: .seconds(configuration.keyCacheSeconds)),
                sessions: sessions, configuration: configuration),
            readiness: readiness, peers: peers, gate: gate, bodyLimit: configuration.bodyLimit,
            defaultTimeout: .milliseconds(Int64(runtime.internalTimeoutMilliseconds)))
        controller.trustedProxies = configuration.trustedProxies
        controller.directFiles = configuration.filesRoot.map(DirectFiles.init)
        controller.realTimeURL = configuration.realTimeURL
        let handler: GatewayRoutes.Handler = { [controller] route, service in
            guard service != .gateway else { return controller.answer(GatewayRoute(rawValue: route.path)!) }
            return { request, context, address in
                try await controller.handle(request, context: context, route: route, service: service, address: address)
            }
        }
        let description = controller.description
        let routes = GatewayRoutes(
            services: services, description: description, unmatched: controller.unmatched,
            configure: { configure($0, description: description, configuration: configuration) }, handler: handler)
        let loader = ManifestLoader(
            routes: routes, peers: peers, refresh: .seconds(configuration.routesRefreshSeconds), logger: logger)
        let publicServer = Application(
            responder: routes,
            server: .http1AndH2C(
                webSockets: webSocketUpgrades(responder: routes, maximumFrameSize: maximumWebSocketFrame),
                headTimeout: .milliseconds(Int64(configuration.headTimeoutMilliseconds))),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "gateway"),
            onServerRunning: { channel in await ports.bound(.publicAPI, channel.localAddress?.port ?? 0) },
            logger: logger)
        let operations = OperationsServer.make(
            service: .gateway, host: runtime.bindHost, port: runtime.opsPort, ports: ports, logger: logger
        ) {
            // The gateway can serve when it knows every service's routes and can resolve keys,
            // that is when users-service is ready.
            if let missing = routes.missing.first {
                return .init(service: .gateway, ready: false, detail: "routes of \(missing.executable) not loaded")
            }
            let context = CallContext(deadline: .now() + .seconds(1), logger: logger)
            let users = await readiness.status(of: .users, context: context)
            return .init(service: .gateway, ready: users.ready, detail: users.ready ? nil : "users-service not ready")
        }
        return ServiceParts(
            services: [peers, database, listener, catalogListener, loader, publicServer, operations], ports: ports)
    }

    /// The largest WebSocket frame the gateway reads; a socket route's own limit applies below it.
    static let maximumWebSocketFrame = 16 << 20

    /// What the gateway's router has besides the manifests' routes: the edge middlewares (origin
    /// filter, CORS, metrics, request ids and error envelopes) and the gateway's literal routes.
    static func configure(
        _ router: Router<GatewayRequestContext>, description: APIDescription, configuration: GatewayConfiguration
    ) {
        router.middlewares.add(OriginFilterMiddleware(allowed: configuration.corsOrigins))
        router.middlewares.add(
            CORSMiddleware(
                allowOrigin: .originBased,
                allowHeaders: [
                    .accept, .authorization, .contentType, .origin, .userToken, .applicationID,
                    .apiKey, .secretKey, .requestID,
                ],
                allowMethods: [.get, .post, .put, .delete, .patch, .head, .options],
                exposedHeaders: [InternalHeader.requestID], maxAge: .seconds(3600)))
        router.middlewares.add(MetricsMiddleware())
        router.middlewares.add(GatewayEdgeMiddleware())
        router.get("/") { _, _ in try GatewayController.banner() }
        router.get("/api") { _, _ in try GatewayController.banner() }
        router.get("/openapi.json") { _, _ in try description.response() }
    }
}

/// The configured CORS policy around Hummingbird's CORS middleware: drops the `Origin` header
/// of requests from origins not on the list (an empty list allows every origin), so nothing is
/// granted to them, and exposes `x-request-id` on actual (not only preflight) responses.
struct OriginFilterMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let allowed: [String]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var request = request
        if !allowed.isEmpty, let origin = request.headers[.origin], !allowed.contains(origin) {
            var head = request.head
            head.headerFields[.origin] = nil
            request = Request(head: head, body: request.body)
        }
        var response = try await next(request, context)
        if response.headers[.accessControlAllowOrigin] != nil {
            response.headers[.accessControlExposeHeaders] = InternalHeader.requestID
        }
        return response
    }
}
