import AsyncAlgorithms
import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// The headers a passed-through request and its answer keep; everything else stays at its hop.
package enum PassthroughHeaders {
    /// Request headers the owning service sees.
    package static let requestFields: [HTTPField.Name] = [
        .contentType, .range, .ifRange, .ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince,
        .accept, .acceptEncoding, .acceptLanguage, .userAgent,
    ]
    /// Answer headers the client sees.
    package static let responseFields: [HTTPField.Name] = [
        .contentType, .contentLength, .eTag, .lastModified, .contentRange, .acceptRanges, .contentDisposition,
        .cacheControl, .location, .contentEncoding, .expires, .vary, .contentTypeOptions,
    ]
}

extension PassthroughHeaders {
    /// The most header bytes a passed request may carry, counted as HPACK counts them (name,
    /// value and 32 per field, the path included): the services' HTTP/2 servers refuse a header
    /// list over 16 KiB by failing the whole connection, so the gateway refuses it first and
    /// keeps the rest for the pseudo-headers.
    package static let budget = 15 << 10

    /// Refuses a request whose headers could not cross to the service: 414 when the path and
    /// query take most of the budget, 431 otherwise.
    static func checkSize(_ headers: HTTPFields, target: String) throws {
        try checkSize(
            fields: headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 32 }, target: target)
    }

    /// The answer headers the client sees, of those `values` gives by name.
    static func answerFields(_ values: (HTTPField.Name) -> [String]) -> HTTPFields {
        var fields = HTTPFields()
        for name in responseFields {
            let found = values(name)
            if !found.isEmpty { fields[values: name] = found }
        }
        return fields
    }

    private static func checkSize(fields: Int, target: String) throws {
        let path = target.utf8.count + 32
        guard fields + path > budget else { return }
        if path > budget / 2 {
            throw ErrorEnvelope(
                code: 414,
                message: "The request URI is longer than the gateway passes on; send long queries in a POST body",
                status: 414)
        }
        throw ErrorEnvelope(
            code: 431, message: "The request headers are larger than the gateway passes on", status: 431)
    }
}

/// What a public request carries to its service, whichever way it crosses (a call on a lane
/// or a stream of its own): method, target, the call's context, the public prefix and the
/// allowed headers, held to the header budget.
struct ForwardedHead: Sendable {
    let method: HTTPRequest.Method
    /// The resource's path and query at the service, from the leading slash.
    let target: String
    var fields: HTTPFields

    /// `request` for `target` at the service, under `prefix` publicly; `offeringFiles` offers to
    /// read a stored file in place of a body. Throws 414 or 431 over the budget.
    init(_ request: Request, target: String, prefix: String, context: CallContext, offeringFiles: Bool) throws {
        method = request.method
        self.target = target
        fields = try InternalClient.contextFields(context)
        fields[.publicPrefix] = prefix
        if offeringFiles { fields[.fileDirect] = "1" }
        for name in PassthroughHeaders.requestFields {
            for value in request.headers[values: name] { fields.append(HTTPField(name: name, value: value)) }
        }
        try PassthroughHeaders.checkSize(fields, target: target)
    }
}

/// A public request passed to its owning service, and the answer as it arrives.
package struct PassedResponse: Sendable {
    /// The answer, its body streaming from the service.
    package var response: Response
    /// The ``InternalHeader/sessionsChanged`` header, if the service set one.
    package var sessionsChanged: String?
    /// The stored file to send in place of a body (``InternalHeader/fileLocation``), when the
    /// request offered to read it and the service answered so.
    package var fileLocation: (path: String, range: Range<Int64>)?
    /// The newest catalog version the service used or made (``InternalHeader/catalogVersion``).
    package var catalogVersion: Int64?

    /// The answer with the internal headers a service reports through it.
    init(_ response: Response, reported headers: HTTPHeaders, fileLocation: (path: String, range: Range<Int64>)? = nil)
    {
        self.response = response
        self.sessionsChanged = headers.first(name: InternalHeader.sessionsChanged)
        self.fileLocation = fileLocation
        self.catalogVersion = headers.first(name: InternalHeader.catalogVersion).flatMap(Int64.init)
    }

    /// The answer of a call on a lane with the internal headers its head reports.
    init(_ response: Response, reported fields: HTTPFields) {
        self.response = response
        self.sessionsChanged = fields[.sessionsChanged]
        self.catalogVersion = fields[.catalogVersion].flatMap(Int64.init)
    }
}

extension InternalClient {
    /// Passes a public request to `service` as a real HTTP/2 request on the same method, path
    /// and query, with the allowed headers and the call's context, streaming the body both ways
    /// with backpressure. A request body crossing `route.bodyLimit` ends the call with 413; a
    /// streamed route is bounded by its idle timeout instead of the call's deadline.
    /// The answer's body is written at the pace of the client's connection on `eventLoop`.
    package func pass(
        _ request: Request, resource: String, prefix: String, route: RouteDescriptor, to service: ServiceName,
        context: CallContext, eventLoop: any EventLoop, offeringFiles: Bool = false
    ) async throws -> PassedResponse {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        // The HTTP client would escape a stray `%` again, turning a malformed escape into a
        // literal the service cannot tell from a real `%25`.
        guard PercentEncoding.decode(request.uri.path) != nil else {
            throw ErrorEnvelope.badRequest("The path holds a malformed percent escape or bytes that are not UTF-8")
        }
        let query = request.uri.query.map { "?\($0)" } ?? ""
        let hasBody = Self.hasBody(request)
        let length = request.headers[.contentLength].flatMap(Int64.init)
        let head = try ForwardedHead(
            request, target: "/\(resource)\(query)", prefix: prefix, context: context, offeringFiles: offeringFiles)
        if Self.travelsOnLane(request, route: route, hasBody: hasBody, length: length, offeringFiles: offeringFiles) {
            let call = PassedCall(head: head, route: route, service: service, hasBody: hasBody)
            return try await passOnLane(request, call, context: context, eventLoop: eventLoop)
        }
        var outgoing = HTTPClientRequest(url: "\(base)\(head.target)")
        outgoing.method = .init(rawValue: request.method.rawValue)
        outgoing.headers = HTTPHeaders(head.fields.map { ($0.name.rawName, $0.value) })
        let activity = TransferActivity(idle: route.idleTimeoutMilliseconds.map { .milliseconds($0) })
        var upload: BodyPump?
        if hasBody, let length, length <= Self.smallAnswer {
            // A small body goes whole, so the request has ended before the service can answer:
            // an answer that comes first (a refusal) would otherwise race the stream's reset.
            outgoing.body = .bytes(
                try await Self.smallBody(
                    of: request, route: route, activity: activity, service: service, context: context))
        } else if hasBody {
            let pump = BodyPump(request.limitedBody(limit: route.bodyLimit, activity: activity))
            outgoing.body = .stream(pump.chunks, length: length.map { .known($0) } ?? .unknown)
            upload = pump
        }
        let deadline = route.transfer == .buffered ? context.deadline : .distantFuture
        // The idle timeout covers the upload (the answer's head comes after it); the client's
        // read timeout covers the answer's body, resetting on every part.
        let answer: HTTPClientResponse
        var small: ByteBuffer?
        do {
            answer = try await activity.watch(service: service) {
                [outgoing, retry = !hasBody && request.method == .get] in
                try await self.attempt(on: service, retryingLostConnection: retry, context: context) {
                    try await self.http.execute(outgoing, deadline: deadline, logger: context.logger)
                }
            }
            if answer.headers.first(name: InternalHeader.fileLocation) == nil,
                let length = answer.headers.first(name: "content-length").flatMap(Int.init), length <= Self.smallAnswer
            {
                // A small answer goes to the client in one write (head, body and end; streamed,
                // each part was a write and a system call of its own). An answer that may have
                // come before an upload ended (a refusal) is read whole while the upload is still
                // open: ending the upload first let the HTTP/2 client fail, now and then, an
                // answer body it had not handed over yet.
                small = try await answer.body.collect(upTo: Self.smallAnswer)
            }
        } catch {
            await upload?.stop()
            throw error
        }
        await upload?.stop()
        if let small {
            var response = Self.response(answer, eventLoop: eventLoop)
            response.body = ResponseBody(byteBuffer: small)
            return PassedResponse(response, reported: answer.headers)
        }
        let location = offeringFiles ? Self.fileLocation(answer.headers) : nil
        if location != nil {
            // The answer has no bytes; reading its end lets the stream close instead of being
            // reset, which the service's HTTP/2 server counts against a flood of resets.
            for try await _ in answer.body {}
        }
        return PassedResponse(
            Self.response(answer, eventLoop: eventLoop), reported: answer.headers, fileLocation: location)
    }

    /// The file location and range of an answer, when it names both well formed.
    static func fileLocation(_ headers: HTTPHeaders) -> (path: String, range: Range<Int64>)? {
        guard let path = headers.first(name: InternalHeader.fileLocation),
            let range = headers.first(name: InternalHeader.fileRange)?.split(
                separator: "-", omittingEmptySubsequences: false),
            range.count == 2,
            let start = Int64(range[0]), let end = Int64(range[1]), start >= 0, start < end
        else { return nil }
        return (path, start..<end)
    }

    /// The whole of a small request body (``smallAnswer`` at most). A client that stops sending
    /// is bounded as the call would be: by the route's idle timeout, or by the call's deadline (408).
    static func smallBody(
        of request: Request, route: RouteDescriptor, activity: TransferActivity, service: ServiceName,
        context: CallContext
    ) async throws -> ByteBuffer {
        let body = request.limitedBody(limit: min(route.bodyLimit, Self.smallAnswer), activity: activity)
        let wait = Duration.nanoseconds(max(0, (context.deadline - .now()).nanoseconds))
        return try await activity.watch(service: service) {
            do {
                return try await withTimeout(route.transfer == .buffered ? wait : .seconds(86_400)) {
                    try await body.reduce(into: ByteBuffer()) { $0.writeImmutableBuffer($1) }
                }
            } catch is TimeoutError {
                throw ErrorEnvelope(code: 408, message: "The request body did not arrive in time", status: 408)
            }
        }
    }

    /// The largest request body sent whole, and the largest answer read whole (before an
    /// upload is ended) and written to the client at once.
    static let smallAnswer = 64 << 10

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
        let length = answer.headers.first(name: "content-length").flatMap(Int.init)
        return Response(
            status: .init(code: Int(answer.status.code)),
            headers: PassthroughHeaders.answerFields { answer.headers[$0.canonicalName] },
            body: .paced(answer.body, contentLength: length, eventLoop: eventLoop))
    }
}

/// A public request body read by a task of the gateway's own and handed on chunk by chunk (the
/// hand-over waits for the HTTP client, keeping backpressure). An answer may come before the
/// body ends (a service refusing an upload at once). The connection's handler then reads what
/// remains of the body itself, and two readers of one body crash it, so ``stop()`` ends the
/// reading first: it reads and drops up to ``drainLimit`` more bytes within ``drainTime`` (so
/// the client, still sending, gets the answer on a connection that stays open), and beyond
/// that stops reading, which closes the connection after the answer.
final class BodyPump: Sendable {
    /// The most bytes dropped after an early answer.
    static let drainLimit = 8 << 20
    /// The longest wait for them.
    static let drainTime = Duration.seconds(5)

    /// What the HTTP client sends.
    let chunks = AsyncThrowingChannel<ByteBuffer, any Error>()
    private let task: Task<Void, Never>
    private let draining = Flag()

    /// A flag shared with the reading task.
    private final class Flag: Sendable {
        private let value = Atomic(false)
        func raise() { value.store(true, ordering: .releasing) }
        var isRaised: Bool { value.load(ordering: .acquiring) }
    }

    init<Body: AsyncSequence & Sendable>(_ body: Body) where Body.Element == ByteBuffer {
        let (chunks, draining) = (chunks, draining)
        task = Task {
            var dropped = 0
            do {
                for try await chunk in body {
                    if draining.isRaised {
                        dropped += chunk.readableBytes
                        if dropped > Self.drainLimit { return }
                        continue
                    }
                    await chunks.send(chunk)
                }
                chunks.finish()
            } catch {
                chunks.fail(error)
            }
        }
    }

    /// Ends the reading of the body (draining what a client still sends, within bounds) and
    /// waits until it has ended.
    func stop() async {
        draining.raise()
        chunks.finish()
        let task = task
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await task.value }
            group.addTask {
                // Cancelling ends a read still waiting for the client.
                try? await Task.sleep(for: Self.drainTime)
                task.cancel()
            }
            await group.next()
            group.cancelAll()
        }
        task.cancel()
    }
}
