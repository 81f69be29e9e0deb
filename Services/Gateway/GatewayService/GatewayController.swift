import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import ServiceRuntime

/// Answers every public request: checks the body size, resolves app and key into an identity,
/// then serves `info` itself or forwards the request to the service that owns the path.
struct GatewayController: Sendable {
    let resolver: AppResolver
    let readiness: ServiceReadiness
    let peers: InternalClient
    let gate: PermissionGate
    let bodyLimit: Int
    let defaultTimeout: TimeAmount
    /// Proxies whose `X-Forwarded-For` names the client.
    var trustedProxies: Set<String> = []

    func handle(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let route = PublicRoute(path: request.uri.path) else { return try banner() }
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > bodyLimit {
            throw ErrorEnvelope.payloadTooLarge(limit: bodyLimit)
        }
        var call = CallContext(
            requestID: context.requestID, traceparent: request.headers[.init(InternalHeader.traceparent)!],
            deadline: .now() + defaultTimeout, logger: context.logger)
        call.clientAddress = ClientAddress.resolve(
            peer: context.clientAddress, forwardedFor: request.headers[.init("x-forwarded-for")!], trusted: trustedProxies)
        var resolved = try await resolver.resolve(route.credentials, headers: request.headers, context: call)
        if let token = request.headers[.init("user-token")!], !token.isEmpty {
            resolved.identity = try await resolver.authenticate(resolved.identity, token: token, context: call)
        }
        call.identity = resolved.identity
        switch route.target {
        case .gatewayInfo where request.method == .get:
            return try await info(appName: resolved.appName, identity: resolved.identity, context: call)
        case .backend(let service):
            if service == .data, let data = DataRequest(method: request.method.rawValue, resource: route.resource) {
                try await gate.check(data, identity: resolved.identity, context: call)
            }
            if service == .data, request.method != .get, route.resource.contains("permissions") {
                return try await changingPermissions(request, route: route, appID: resolved.identity.appId, context: call)
            }
            return try await forward(request, resource: route.resourcePath, to: service, context: call)
        default:
            throw ErrorEnvelope.endpointNotFound(method: request.method.rawValue, path: route.resourcePath)
        }
    }

    /// Forwards a permission change and drops the app's cached rules, even when the answer is
    /// lost (the change may have committed): the caller's next request must see it.
    private func changingPermissions(_ request: Request, route: PublicRoute, appID: String, context: CallContext)
        async throws -> Response
    {
        do {
            let response = try await forward(request, resource: route.resourcePath, to: .data, context: context)
            await gate.invalidate(appID: appID)
            return response
        } catch {
            await gate.invalidate(appID: appID)
            throw error
        }
    }

    private func forward(_ request: Request, resource: String, to service: ServiceName, context: CallContext)
        async throws -> Response
    {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: bodyLimit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ErrorEnvelope.payloadTooLarge(limit: bodyLimit)
        }
        let path = request.uri.query.map { "\(resource)?\($0)" } ?? resource
        let answer = try await peers.forward(
            method: request.method.rawValue, path: path, contentType: request.headers[.contentType], body: body,
            to: service, context: context)
        if let userID = answer.sessionsChanged, let appID = context.identity?.appId {
            // The caller's next request may come before the announcement reaches this gateway.
            await resolver.sessions.invalidate(appID: appID, userID: userID)
        }
        var headers = HTTPFields()
        headers[.contentType] = answer.contentType
        return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: answer.body))
    }

    /// `GET …/info`: the app's name and every service's readiness.
    private func info(appName: String, identity: Identity, context: CallContext) async throws -> Response {
        let services = await readiness.all(context: context)
        return try .json(
            AppInfo(
                appId: identity.appId, name: appName, keyKind: identity.keyKind, roles: identity.roles,
                ready: services.allSatisfy(\.ready), services: services))
    }

    /// `GET /` and `GET /api`: the endpoint is up (the seed's browser check).
    private func banner() throws -> Response {
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
}
