import Hummingbird
import InternalProtocol
import NIOCore
import PostgresSupport

/// A service's public routes, declared once: each declaration registers its handler on the
/// service's Hummingbird router (under ``PublicRequestContext``) and becomes an entry of the
/// ``RouteManifest`` the gateway routes by.
package struct PublicRoutes: Sendable {
    /// A handler of a buffered route, called with the body already read.
    package typealias Handler = @Sendable (PublicCall) async throws -> Response
    /// A handler of a streamed route, reading and writing bodies as they flow.
    package typealias StreamHandler = @Sendable (Request, PublicRequestContext) async throws -> Response

    private struct Entry: Sendable {
        let descriptor: RouteDescriptor
        let responder: StreamHandler
    }

    /// The service serving the routes.
    package let service: ServiceName
    private var entries: [Entry] = []
    /// The socket routes by path, served over socket lanes.
    var sockets: [String: SocketRoute] = [:]
    /// The schemas the routes' descriptions refer to by name, published with them.
    package var schemas: [String: APISchema] = [:]
    /// Runs around every buffered handler declared after it is set (a retry, for instance).
    package var around: (@Sendable (PublicCall, Handler) async throws -> Response)?
    /// The schemas of path parameters by name for routes declared after it is set, where a
    /// route's own ``RouteDoc/path`` says nothing of them (`table`: an identifier, …).
    package var pathParameters: [String: APISchema] = [:]
    /// As ``pathParameters``, for DELETE routes (their examples name things a fuzzer may remove).
    package var removalPathParameters: [String: APISchema] = [:]

    /// An empty table for `service`.
    package init(service: ServiceName) {
        self.service = service
    }

    /// Publishes `named` schemas with the routes (a name given twice keeps the latest).
    package mutating func publish(_ named: [String: APISchema]) {
        schemas.merge(named) { _, latest in latest }
    }

    /// The manifest the gateway routes by.
    package var manifest: RouteManifest {
        RouteManifest(service: service, routes: entries.map(\.descriptor), schemas: schemas)
    }

    /// Declares a buffered route: `path` in Hummingbird's syntax without a leading slash
    /// (`data/:table/:id`); the body is read whole within `options.bodyLimit` (413 beyond it,
    /// refused by its declared length before any byte is read); `doc` describes it in `openapi.json`.
    package mutating func add(
        _ method: HTTPRequest.Method, _ path: String, permission: RoutePermission? = nil,
        options: RouteOptions = .json, doc: RouteDoc, _ handler: @escaping Handler
    ) {
        let limit = options.bodyLimit
        let handler = wrapped(handler)
        declare(method, path, permission: permission, options: options, doc: doc) { request, context in
            let call = PublicCall(
                method: request.method, uri: request.uri, headers: request.headers,
                parameters: context.decodedParameters, body: try await Self.body(of: request, limit: limit),
                identity: context.identity, context: context.call)
            return try await handler(call)
        }
    }

    private func wrapped(_ handler: @escaping Handler) -> Handler {
        guard let around else { return handler }
        return { call in try await around(call, handler) }
    }

    /// Declares a streamed route: the handler reads the request body as it arrives and may
    /// answer a streamed body; `options` names its limit and idle timeout.
    package mutating func stream(
        _ method: HTTPRequest.Method, _ path: String, permission: RoutePermission? = nil, options: RouteOptions,
        doc: RouteDoc, _ handler: @escaping StreamHandler
    ) {
        declare(method, path, permission: permission, options: options, doc: doc, handler)
    }

    private mutating func declare(
        _ method: HTTPRequest.Method, _ path: String, permission: RoutePermission?, options: RouteOptions,
        doc: RouteDoc, _ responder: @escaping StreamHandler
    ) {
        var descriptor = options.descriptor(method: method.rawValue, path: path, permission: permission)
        var doc = doc
        for name in Self.parameterNames(path) where doc.path[name] == nil {
            doc.path[name] = (method == .delete ? removalPathParameters[name] : nil) ?? pathParameters[name]
        }
        descriptor.doc = doc
        precondition(
            !entries.contains { $0.descriptor.method == descriptor.method && $0.descriptor.path == path },
            "\(service.executable) declares \(method) \(path) twice")
        entries.append(Entry(descriptor: descriptor, responder: responder))
    }

    /// The parameters a path captures: `:name` segments and `{name}` inside a segment.
    static func parameterNames(_ path: String) -> [String] {
        path.split(separator: "/").compactMap { segment in
            if segment == "**" { return "path" }
            if segment.hasPrefix(":") { return String(segment.dropFirst()) }
            guard let open = segment.firstIndex(of: "{"), let close = segment.firstIndex(of: "}"), open < close else {
                return nil
            }
            return String(segment[segment.index(after: open)..<close])
        }
    }

    /// Registers every handler on the internal server's router; with `health`, requests are
    /// refused at once while the database cannot be reached.
    func register(on router: Router<RPCRequestContext>, health: DatabaseHealth? = nil) {
        register(entries, on: router, health: health)
        guard !sockets.isEmpty else { return }
        let lanes = SocketLaneServer(routes: sockets)
        router.get(RouterPath(SocketLaneServer.path)) { request, context in
            try lanes.response(request, context: context)
        }
    }

    /// Registers the handlers of buffered routes, the only ones calls on a lane reach, on the
    /// router lanes run their calls through (``CallLaneServer``).
    func registerCalls(on router: Router<RPCRequestContext>, health: DatabaseHealth? = nil) {
        register(entries.filter { $0.descriptor.transfer == .buffered }, on: router, health: health)
    }

    private func register(_ entries: [Entry], on router: Router<RPCRequestContext>, health: DatabaseHealth?) {
        let group = router.group(context: PublicRequestContext.self)
        if let health { group.add(middleware: DatabaseGate(health: health)) }
        for entry in entries {
            let method = HTTPRequest.Method(entry.descriptor.method)!
            var responder = entry.responder
            if let health, entry.descriptor.transfer == .streamed {
                // A stream has no deadline: one waiting on the database when it goes away is
                // refused then, not when it comes back.
                responder = { request, context in
                    try await health.racing(unreachable: ErrorEnvelope.databaseUnavailable) {
                        try await entry.responder(request, context)
                    }
                }
            }
            group.on(RouterPath("/" + entry.descriptor.path), method: method, use: responder)
        }
    }

    /// The whole body, refused with 413 by its declared length or once it crosses `limit`.
    package static func body(of request: Request, limit: Int) async throws -> ByteBuffer {
        if let declared = request.headers[.contentLength].flatMap(Int.init), declared > limit {
            throw ErrorEnvelope.payloadTooLarge(limit: limit)
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ErrorEnvelope.payloadTooLarge(limit: limit)
        }
    }
}

/// A route's limits and transfer kind.
package struct RouteOptions: Sendable {
    /// The largest request body in bytes.
    package var bodyLimit: Int
    /// How bodies travel.
    package var transfer: RouteDescriptor.Transfer
    /// For streams: how long a transfer may stay silent.
    package var idleTimeout: Duration?
    /// Also served without an API key (see ``RouteDescriptor/keyless``).
    package var keyless = false
    /// A successful call changes the app's permission rules.
    package var changesPermissions = false
    /// Also served at `/{appId}/` with the credentials in the query (see ``RouteDescriptor/atAppRoot``).
    package var atAppRoot = false

    /// Creates options.
    package init(bodyLimit: Int, transfer: RouteDescriptor.Transfer, idleTimeout: Duration? = nil) {
        self.bodyLimit = bodyLimit
        self.transfer = transfer
        self.idleTimeout = idleTimeout
    }

    /// The default JSON body limit: 32 MiB.
    package static let jsonBodyLimit = 32 << 20

    /// A JSON route: bodies up to ``jsonBodyLimit``, read whole.
    package static let json = RouteOptions(bodyLimit: jsonBodyLimit, transfer: .buffered)

    /// A keyless JSON route (the account pages).
    package static var keylessJSON: RouteOptions {
        var options = json
        options.keyless = true
        return options
    }

    /// A JSON route that changes permission rules.
    package static var permissionChange: RouteOptions {
        var options = json
        options.changesPermissions = true
        return options
    }

    /// A streamed route taking bodies up to `limit` bytes, cut after `idleTimeout` of silence.
    package static func streamed(limit: Int, idleTimeout: Duration) -> RouteOptions {
        RouteOptions(bodyLimit: limit, transfer: .streamed, idleTimeout: idleTimeout)
    }

    func descriptor(method: String, path: String, permission: RoutePermission?) -> RouteDescriptor {
        RouteDescriptor(
            method: method, path: path, permission: permission, bodyLimit: bodyLimit, transfer: transfer,
            idleTimeoutMilliseconds: idleTimeout.map { Int($0.nanoseconds / 1_000_000) },
            keyless: keyless, changesPermissions: changesPermissions, atAppRoot: atAppRoot)
    }
}
