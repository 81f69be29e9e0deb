import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import Permissions
import ServiceRuntime

/// Answers every public request: checks the body's declared size, resolves app and key into an
/// identity, applies the route's row-independent permission check, and passes the request to
/// the service that owns the route, streaming both ways.
struct GatewayController: Sendable {
    let resolver: AppResolver
    let readiness: ServiceReadiness
    let peers: InternalClient
    let gate: PermissionGate
    /// The cap on buffered (JSON) bodies, whatever a route declares.
    let bodyLimit: Int
    let defaultTimeout: TimeAmount
    /// Proxies whose `X-Forwarded-For` names the client.
    var trustedProxies: Set<String> = []
    /// The local file store, when the gateway sends downloads from it itself.
    var directFiles: DirectFiles?
    /// The real-time URL answered by `rt/lookup` and `info`, when configured.
    var realTimeURL: String?
    /// `openapi.json`, kept current by the routes.
    let description = APIDescription()

    /// Answers a request matched to `route` of `service` at `address`.
    func handle(
        _ request: Request, context: GatewayRequestContext, route: RouteDescriptor, service: ServiceName,
        address: PublicAddress
    ) async throws -> Response {
        let limit = route.transfer == .buffered ? min(route.bodyLimit, bodyLimit) : route.bodyLimit
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw ErrorEnvelope.payloadTooLarge(limit: limit)
        }
        let (_, call) = try await resolve(request, context: context, address: address)
        // Routes under the data tables' rules, as their manifest says: the gateway keeps those
        // rules, which a permission change passed through here has just refreshed.
        if let permission = route.permission, permission.rules == .dataTables, let identity = call.identity,
            let operation = DataOperation(rawValue: permission.operation),
            let table = context.decodedParameter(permission.containerParameter)
        {
            try await gate.check(DataRequest(table: table, operation: operation), identity: identity, context: call)
        }
        if route.transfer == .bidirectional {
            return try await openSocket(
                request, context: context, route: route, service: service, address: address, call: call)
        }
        var limited = route
        limited.bodyLimit = limit
        let target = Target(route: limited, service: service, address: address, eventLoop: context.eventLoop)
        guard route.changesPermissions else { return try await pass(request, to: target, context: call) }
        return try await changingPermissions(request, to: target, context: call)
    }

    /// Where a matched request goes and how it travels.
    private struct Target {
        /// The route, with the body limit that applies.
        let route: RouteDescriptor
        let service: ServiceName
        let address: PublicAddress
        /// The client connection's event loop, which the answer is written at the pace of.
        let eventLoop: any EventLoop
    }

    /// The caller's app and identity (the `user-token`'s user when one is sent), and the call's
    /// context carrying them.
    private func resolve(_ request: Request, context: GatewayRequestContext, address: PublicAddress)
        async throws -> (AppResolver.Resolved, CallContext)
    {
        var call = CallContext(
            requestID: context.requestID, traceparent: request.headers[.traceparent],
            deadline: .now() + defaultTimeout, logger: context.logger)
        call.clientAddress = ClientAddress.resolve(
            peer: context.clientAddress, forwardedFor: request.headers[.forwardedFor], trusted: trustedProxies)
        let queryKey = address.credentials == .query ? request.uri.queryParameters["apiKey"].map(String.init) : nil
        var resolved = try await resolver.resolve(address, headers: request.headers, queryKey: queryKey, call: call)
        if let token = Self.userToken(request, credentials: address.credentials) {
            resolved.identity = try await resolver.authenticate(resolved.identity, token: token, context: call)
        }
        call.identity = resolved.identity
        call.catalogVersion = gate.version(of: resolved.identity.appId)
        return (resolved, call)
    }

    /// The request's `user-token` header, or on the socket.io path its `userToken` query
    /// parameter, where clients send `null` for none.
    static func userToken(_ request: Request, credentials: Credentials) -> String? {
        ResolveUserToken.presented(
            credentials == .query
                ? request.uri.queryParameters["userToken"].map(String.init) : request.headers[.userToken])
    }

    /// Passes a permission change on and drops the app's cached rules, even when the answer is
    /// lost (the change may have committed): the caller's next request must see it.
    private func changingPermissions(_ request: Request, to target: Target, context: CallContext)
        async throws -> Response
    {
        let appID = context.identity?.appId ?? ""
        do {
            let response = try await pass(request, to: target, context: context)
            await gate.invalidate(appID: appID)
            return response
        } catch {
            await gate.invalidate(appID: appID)
            throw error
        }
    }

    private func pass(_ request: Request, to target: Target, context: CallContext) async throws -> Response {
        let answer = try await peers.pass(
            request, resource: target.address.resource, prefix: target.address.prefix, route: target.route,
            to: target.service, context: context, eventLoop: target.eventLoop,
            offeringFiles: directFiles != nil && target.service == .files)
        if let version = answer.catalogVersion, let appID = context.identity?.appId {
            await gate.reached(version, appID: appID)
        }
        if let userID = answer.sessionsChanged, let appID = context.identity?.appId {
            // The caller's next request may come before the announcement reaches this gateway.
            await resolver.sessions.invalidate(appID: appID, userID: userID)
        }
        if let location = answer.fileLocation, let directFiles {
            return try await directFiles.response(answer.response, location: location, app: context.identity?.appId)
        }
        return answer.response
    }

    /// Opens the internal stream of a socket route and leaves its relay in the request's slot;
    /// 101 tells the upgrade to go ahead. Without a slot the request asked for no upgrade: 426.
    private func openSocket(
        _ request: Request, context: GatewayRequestContext, route: RouteDescriptor, service: ServiceName,
        address: PublicAddress, call: CallContext
    ) async throws -> Response {
        guard let slot = context.socketSlot else {
            throw ErrorEnvelope(code: 426, message: "This endpoint takes a WebSocket upgrade", status: 426)
        }
        let socket = try await peers.openSocket(
            request, resource: address.resource, route: route, to: service, context: call)
        slot.fill(OpenedSocket(socket: socket, route: route))
        return Response(status: .switchingProtocols)
    }

    /// The handler of one of the gateway's own routes.
    func answer(_ route: GatewayRoute) -> GatewayRoutes.RouteHandler {
        switch route {
        case .info: info
        case .realTimeLookup: realTimeLookup
        case .openAPI: describe
        }
    }

    /// `GET …/openapi.json`: the API's description, to a caller with a valid key.
    private func describe(_ request: Request, context: GatewayRequestContext, address: PublicAddress) async throws
        -> Response
    {
        _ = try await resolve(request, context: context, address: address)
        return try description.response()
    }

    /// `GET …/info`: the app's name, every service's readiness and where real-time clients connect.
    func info(_ request: Request, context: GatewayRequestContext, address: PublicAddress) async throws -> Response {
        let (resolved, call) = try await resolve(request, context: context, address: address)
        let services = await readiness.all(context: call)
        let identity = resolved.identity
        return try .json(
            AppInfo(
                appId: identity.appId, name: resolved.appName, keyKind: identity.keyKind, roles: identity.roles,
                ready: services.allSatisfy(\.ready), services: services, rtURL: realTimeURL(request)))
    }

    /// `GET …/rt/lookup`: where real-time clients connect, as a JSON string (what the Swift SDK
    /// and JS SDKs before 7.4 ask).
    func realTimeLookup(_ request: Request, context: GatewayRequestContext, address: PublicAddress) async throws
        -> Response
    {
        _ = try await resolve(request, context: context, address: address)
        return try .json(realTimeURL(request))
    }

    /// The configured real-time URL, else this gateway as the client reached it: socket.io
    /// clients connect to `{url}/{appId}/`, which the gateway relays to messaging-service.
    func realTimeURL(_ request: Request) -> String {
        if let realTimeURL { return realTimeURL }
        let scheme = request.headers[.forwardedProto] == "https" ? "https" : "http"
        return "\(scheme)://\(request.head.authority ?? "localhost")"
    }

    /// A request no route matches: the caller's credentials are still checked (a wrong key is
    /// 2002 on any path), then 404 naming the path after the app prefix.
    func unmatched(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let address = PublicAddress(unmatched: request.uri.path)
        _ = try await resolve(request, context: context, address: address)
        throw ErrorEnvelope.endpointNotFound(method: request.method.rawValue, path: address.resource)
    }

    /// `GET /` and `GET /api`: the endpoint is up (the seed's browser check).
    static func banner() throws -> Response {
        try .json(["name": "BaaS gateway", "status": "API endpoint is working"])
    }
}

/// The body of `GET …/info`: the app, the caller's key kind and roles, and readiness.
struct AppInfo: Codable, Sendable {
    let appId: String
    let name: String
    let keyKind: APIKeyKind
    let roles: [String]
    let ready: Bool
    let services: [ServiceReadiness.Entry]
    /// Where real-time clients connect (JS SDK 7.4 and later read it).
    let rtURL: String
}
