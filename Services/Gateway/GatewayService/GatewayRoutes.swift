import Hummingbird
import InternalProtocol
import Synchronization

/// The gateway's one router: its middlewares, its own routes and every route of the services'
/// ``RouteManifest``s (each under `/{appId}/{apiKey}/…` and `/api/…`, `/{appId}/…` when keyless,
/// `/{appId}` when served at the app's root), built with Hummingbird's router and rebuilt
/// whenever a manifest changes, so a route a service adds is routed without a gateway edit. A
/// request is matched once, here; its handler gets the path split once (``PublicAddress``).
final class GatewayRoutes: HTTPResponder, Sendable {
    typealias Context = GatewayRequestContext
    /// Answers a request no route matches (by throwing).
    typealias Unmatched = @Sendable (Request, GatewayRequestContext) async throws -> Response
    /// Makes the handler for one route of one service.
    typealias Handler = @Sendable (RouteDescriptor, ServiceName) -> RouteHandler
    /// Answers a matched request at its address.
    typealias RouteHandler = @Sendable (Request, GatewayRequestContext, PublicAddress) async throws -> Response
    /// Adds what every router has besides the manifests' routes: middlewares, literal routes.
    typealias Configure = @Sendable (Router<GatewayRequestContext>) -> Void

    private struct State {
        var manifests: [ServiceName: RouteManifest] = [:]
        var responder: RouterResponder<GatewayRequestContext>?
    }

    /// The services whose manifests the gateway routes by.
    let services: [ServiceName]
    /// `openapi.json`, rebuilt with the router.
    let description: APIDescription
    private let handler: Handler
    private let unmatched: Unmatched
    private let configure: Configure
    private let state: Mutex<State>

    /// Routes for `services`, answering matched requests with `handler` and the rest with
    /// `unmatched` (a plain 404 by default); `configure` adds middlewares and literal routes.
    init(
        services: [ServiceName], description: APIDescription = APIDescription(), unmatched: Unmatched? = nil,
        configure: @escaping Configure = { _ in }, handler: @escaping Handler
    ) {
        self.services = services
        self.description = description
        self.handler = handler
        self.unmatched =
            unmatched ?? { request, _ in
                throw ErrorEnvelope.endpointNotFound(
                    method: request.method.rawValue, path: String(request.uri.path.dropFirst()))
            }
        self.configure = configure
        state = Mutex(State())
        // The gateway's own routes and middlewares serve before any manifest has arrived.
        let initial = Self.build(
            [Self.gatewayManifest], handler: handler, configure: configure, notFound: notFoundHandler)
        state.withLock { $0.responder = initial }
    }

    /// ``notFound(_:_:)`` for the router, which must not keep the routes alive.
    private var notFoundHandler: Unmatched {
        { [weak self] request, context in
            guard let self else { throw ErrorEnvelope.serviceUnavailable(.gateway) }
            return try await self.notFound(request, context)
        }
    }

    /// The services whose manifests have not arrived yet.
    var missing: [ServiceName] {
        state.withLock { missing(in: $0) }
    }

    private func missing(in state: State) -> [ServiceName] {
        services.filter { state.manifests[$0] == nil }
    }

    /// Takes a service's manifest; rebuilds the router when it differs from the one in use.
    func update(_ manifest: RouteManifest) {
        state.withLock { state in
            guard state.manifests[manifest.service] != manifest else { return }
            state.manifests[manifest.service] = manifest
            let manifests = [Self.gatewayManifest] + services.compactMap { state.manifests[$0] }
            state.responder = Self.build(manifests, handler: handler, configure: configure, notFound: notFoundHandler)
            description.update(manifests, complete: missing(in: state).isEmpty)
        }
    }

    /// Answers a public request by the route it matches; unmatched requests are 404, or 503
    /// while some service's routes are unknown.
    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let responder = state.withLock({ $0.responder }) else { return try await notFound(request, context) }
        return try await responder.respond(to: request, context: context)
    }

    /// A request no route matches: 503 while a service's routes are unknown, else `unmatched`.
    private func notFound(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        if let service = missing.first { throw ErrorEnvelope.serviceUnavailable(service) }
        return try await unmatched(request, context)
    }

    /// The gateway's own routes: `GET …/info`, `GET …/rt/lookup` and `GET …/openapi.json`.
    static let gatewayManifest = RouteManifest(
        service: .gateway,
        routes: GatewayRoute.allCases.map {
            RouteDescriptor(method: "GET", path: $0.rawValue, bodyLimit: 0, doc: $0.doc)
        },
        schemas: GatewayRoute.schemas)

    private static func build(
        _ manifests: [RouteManifest], handler: Handler, configure: Configure, notFound: @escaping Unmatched
    ) -> RouterResponder<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        configure(router)
        // The router answers "no route" itself with an empty 404; this turns it into ours.
        router.middlewares.add(NotFoundMiddleware(notFound: notFound))
        var atAppRoot: [HTTPRequest.Method: AppRootRoutes] = [:]
        for manifest in manifests {
            for route in manifest.routes {
                guard let method = HTTPRequest.Method(route.method) else { continue }
                let answer = handler(route, manifest.service)
                for credentials in Credentials.prefixed where credentials != .appOnly || route.keyless {
                    router.on(RouterPath(credentials.pattern + route.path), method: method) { request, context in
                        try await answer(
                            request, context, PublicAddress(path: request.uri.path, credentials: credentials))
                    }
                }
                if route.atAppRoot {
                    atAppRoot[method, default: AppRootRoutes()].add(
                        answer, path: route.path, socket: route.transfer == .bidirectional)
                }
            }
        }
        for (method, routes) in atAppRoot {
            router.on(RouterPath("/*"), method: method) { request, context in
                try await routes.answer(request, context)
            }
        }
        return router.buildResponder()
    }
}

/// The routes served at `/{appId}/` for one method: a socket route takes the WebSocket upgrades
/// and a plain route every other request, so socket.io's long-polling and its upgrade share the
/// path (either alone takes everything). Each is addressed by its own path.
struct AppRootRoutes: Sendable {
    private var socket: (answer: GatewayRoutes.RouteHandler, path: String)?
    private var plain: (answer: GatewayRoutes.RouteHandler, path: String)?

    mutating func add(_ answer: @escaping GatewayRoutes.RouteHandler, path: String, socket isSocket: Bool) {
        if isSocket { socket = (answer, path) } else { plain = (answer, path) }
    }

    func answer(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let upgrade = context.socketSlot != nil
        guard let route = (upgrade ? socket ?? plain : plain ?? socket) else { throw HTTPError(.notFound) }
        let address = PublicAddress(path: request.uri.path, credentials: .query, rootRoute: route.path)
        return try await route.answer(request, context, address)
    }
}

/// Where a matched request's app and key come from.
enum Credentials: Equatable, Sendable {
    /// `/{appId}/{apiKey}/…`.
    case path
    /// `/api/…`: app and key come from headers or configuration.
    case headers
    /// `/{appId}/…` on a keyless route: the app's anonymous REST client.
    case appOnly
    /// `/{appId}/?apiKey=…&userToken=…` (socket.io's path for the real-time protocol).
    case query

    /// The credentials a route is served under by prefixing its path (``pattern``).
    static let prefixed: [Credentials] = [.path, .headers, .appOnly]

    /// The router pattern before a route's path: one wildcard per segment the prefix takes.
    var pattern: String {
        switch self {
        case .path: "/*/*/"
        case .headers: "/api/"
        case .appOnly, .query: "/*/"
        }
    }
}

/// Hands the router's "no route" to the gateway (key check, then a JSON 404).
struct NotFoundMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let notFound: GatewayRoutes.Unmatched

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return try await notFound(request, context)
        }
    }
}
