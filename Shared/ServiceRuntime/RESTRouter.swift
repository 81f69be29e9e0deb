import Foundation
import Hummingbird
import HummingbirdCore
import InternalProtocol
import NIOCore

/// The public REST endpoints a service owns, reached through the gateway's ``RESTForward``
/// operation. Patterns are slash-separated segments where `:name` captures one segment.
public struct RESTRouter: Sendable {
    /// One matched public request.
    public struct Call: Sendable {
        /// The public method.
        public var method: HTTPRequest.Method
        /// The public path and query, as the client sent them after the app prefix.
        public var uri: URI
        /// Captured `:name` segments, percent-decoded.
        public var parameters: [String: String]
        /// The public body, unchanged.
        public var body: ByteBuffer
        /// Request id, deadline and identity.
        public var context: CallContext

        /// The identity the gateway resolved; every forwarded call has one (else 2002).
        public var identity: Identity {
            get throws {
                guard let identity = context.identity else { throw ErrorEnvelope.invalidApplicationInfo }
                return identity
            }
        }
    }

    /// A handler for a matched call.
    public typealias Handler = @Sendable (Call) async throws -> Response

    private struct Route: Sendable {
        let method: HTTPRequest.Method
        let segments: [Substring]
        let handler: Handler
    }

    /// The service these routes belong to, named in "no endpoint" errors.
    public let service: ServiceName
    private var routes: [Route] = []

    /// Creates an empty router for `service`.
    public init(service: ServiceName) {
        self.service = service
    }

    /// Adds an endpoint.
    public mutating func add(_ method: HTTPRequest.Method, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, segments: pattern.split(separator: "/"), handler: handler))
    }

    /// Answers a forwarded request: the first route whose method and pattern match, else 404.
    public func respond(to request: Request, context: RPCRequestContext) async throws -> Response {
        let methodName = request.headers[.init(InternalHeader.publicMethod)!] ?? "GET"
        let method = HTTPRequest.Method(methodName) ?? .get
        let uri = URI(request.headers[.init(InternalHeader.publicPath)!] ?? "")
        let path = uri.path.split(separator: "/")
        for route in routes where route.method == method {
            guard let parameters = Self.match(route.segments, path) else { continue }
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            return try await route.handler(
                Call(method: method, uri: uri, parameters: parameters, body: body, context: context.call))
        }
        let resource = path.joined(separator: "/")
        throw ErrorEnvelope(
            code: 404, message: "No endpoint for \(methodName) /\(resource) in \(service.executable)", status: 404)
    }

    private static func match(_ pattern: [Substring], _ path: [Substring]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, path) {
            if expected.hasPrefix(":") {
                parameters[String(expected.dropFirst())] = PercentEncoding.decode(actual) ?? String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
