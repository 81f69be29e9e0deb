import AsyncHTTPClient
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOHTTP1

/// The headers a passed-through request and its answer keep; everything else stays at its hop.
public enum PassthroughHeaders {
    /// Request headers the owning service sees.
    public static let request: [String] = [
        "content-type", "range", "if-range", "if-none-match", "if-modified-since", "if-match",
        "if-unmodified-since", "accept", "accept-encoding", "accept-language", "user-agent",
    ]
    /// Answer headers the client sees.
    public static let response: [String] = [
        "content-type", "content-length", "etag", "last-modified", "content-range", "accept-ranges",
        "content-disposition", "cache-control", "location", "content-encoding", "expires", "vary",
    ]
}

extension PassthroughHeaders {
    /// The most header bytes a passed request may carry, counted as HPACK counts them (name,
    /// value and 32 per field, the path included): the services' HTTP/2 servers refuse a header
    /// list over 16 KiB by failing the whole connection, so the gateway refuses it first and
    /// keeps the rest for the pseudo-headers.
    public static let budget = 15 << 10

    /// Refuses a request whose headers could not cross to the service: 414 when the path and
    /// query take most of the budget, 431 otherwise.
    static func checkSize(_ headers: HTTPHeaders, target: String) throws {
        let fields = headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
        let path = target.utf8.count + 32
        guard fields + path > budget else { return }
        if path > budget / 2 {
            throw ErrorEnvelope(
                code: 414, message: "The request URI is longer than the gateway passes on; send long queries in a POST body",
                status: 414)
        }
        throw ErrorEnvelope(code: 431, message: "The request headers are larger than the gateway passes on", status: 431)
    }
}

/// A public request passed to its owning service, and the answer as it arrives.
public struct PassedResponse: Sendable {
    /// The answer, its body streaming from the service.
    public var response: Response
    /// The ``InternalHeader/sessionsChanged`` header, if the service set one.
    public var sessionsChanged: String?
}

extension InternalClient {
    /// Passes a public request to `service` as a real HTTP/2 request on the same method, path
    /// and query, with the allowed headers and the call's context, streaming the body both ways
    /// with backpressure. A request body crossing `route.bodyLimit` ends the call with 413; a
    /// streamed route is bounded by its idle timeout instead of the call's deadline.
    /// The answer's body is written at the pace of the client's connection on `eventLoop`.
    public func pass(
        _ request: Request, resource: String, route: RouteDescriptor, to service: ServiceName, context: CallContext,
        eventLoop: any EventLoop
    ) async throws -> PassedResponse {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        var outgoing = HTTPClientRequest(url: "\(base)/\(resource)\(query)")
        outgoing.method = .init(rawValue: request.method.rawValue)
        outgoing.headers = try Self.contextHeaders(context)
        // The path is `prefix/resource`, the resource cut from its end by the gateway.
        let prefix = request.uri.path.utf8.dropLast(resource.utf8.count + 1)
        outgoing.headers.add(name: InternalHeader.publicPrefix, value: String(Substring(prefix)))
        for name in PassthroughHeaders.request {
            for value in request.headers[values: .init(name)!] { outgoing.headers.add(name: name, value: value) }
        }
        try PassthroughHeaders.checkSize(outgoing.headers, target: "/\(resource)\(query)")
        let activity = TransferActivity(idle: route.idleTimeoutMilliseconds.map { .milliseconds($0) })
        let hasBody = Self.hasBody(request)
        if hasBody {
            let length = request.headers[.contentLength].flatMap(Int64.init)
            outgoing.body = .stream(
                request.limitedBody(limit: route.bodyLimit, activity: activity), length: length.map { .known($0) } ?? .unknown)
        }
        let deadline = route.transfer == .buffered ? context.deadline : .distantFuture
        // The idle timeout covers the upload (the answer's head comes after it); the client's
        // read timeout covers the answer's body, resetting on every part.
        let answer = try await activity.watch(service: service) { [outgoing, retry = !hasBody && request.method == .get] in
            try await self.attempt(on: service, retryingLostConnection: retry, context: context) {
                try await self.http.execute(outgoing, deadline: deadline, logger: context.logger)
            }
        }
        return PassedResponse(
            response: Self.response(answer, eventLoop: eventLoop),
            sessionsChanged: answer.headers.first(name: InternalHeader.sessionsChanged))
    }

    /// Whether the public request carries a body to pass on.
    static func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength] { return length != "0" }
        if request.headers[.transferEncoding] != nil { return true }
        // HTTP/2 requests may stream a body without declaring its length.
        return ![.get, .head, .delete, .options].contains(request.method)
    }

    /// The client's answer: status, the allowed headers and the body as it streams. A service
    /// failing mid-body ends the client's response with an error, never a truncated success.
    private static func response(_ answer: HTTPClientResponse, eventLoop: any EventLoop) -> Response {
        var headers = HTTPFields()
        for name in PassthroughHeaders.response {
            let values = answer.headers[name]
            if !values.isEmpty { headers[values: .init(name)!] = values }
        }
        let length = answer.headers.first(name: "content-length").flatMap(Int.init)
        return Response(
            status: .init(code: Int(answer.status.code)), headers: headers,
            body: .paced(answer.body, contentLength: length, eventLoop: eventLoop))
    }
}
