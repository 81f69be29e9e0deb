import HTTPTypes
import Hummingbird
import InternalProtocol
import NIOCore

/// A public request on its way to a service as a call on a lane.
struct PassedCall: Sendable {
    let head: ForwardedHead
    let route: RouteDescriptor
    let service: ServiceName
    let hasBody: Bool
}

extension InternalClient {
    /// Whether a public request travels as a call on a lane: a buffered route's request
    /// without a body or with a small one of known length, under a method whose answer has a
    /// body, and no offer to read a stored file. Everything else (uploads, downloads, files,
    /// sockets) keeps a stream of its own.
    static func travelsOnLane(
        _ request: Request, route: RouteDescriptor, hasBody: Bool, length: Int64?, offeringFiles: Bool
    ) -> Bool {
        guard route.transfer == .buffered, !offeringFiles, request.method != .head, request.method != .connect else {
            return false
        }
        guard hasBody else { return true }
        return length.map { $0 <= Self.smallAnswer } ?? false
    }

    /// Passes a public request as a call on a lane (``travelsOnLane(_:route:hasBody:length:offeringFiles:)``):
    /// the same ``ForwardedHead`` as on a stream of its own, the body
    /// whole; the answer's body whole when it has all arrived with its head, or else written on
    /// at the pace of the client's connection on `eventLoop`.
    func passOnLane(
        _ request: Request, _ call: PassedCall, context: CallContext, eventLoop: any EventLoop
    ) async throws -> PassedResponse {
        var headers = call.head.fields
        var body = ByteBuffer()
        if call.hasBody {
            let activity = TransferActivity(idle: nil)
            body = try await Self.smallBody(
                of: request, route: call.route, activity: activity, service: call.service, context: context)
            headers[.contentLength] = String(body.readableBytes)
        }
        let (answer, ticket) = try await callOnLane(
            CallHead(method: call.head.method, target: call.head.target, headers: headers), body: body,
            to: call.service,
            context: context, eventLoop: eventLoop, retryingLost: !call.hasBody && request.method == .get)
        let fields = PassthroughHeaders.answerFields { answer.headers[values: $0] }
        let response: ResponseBody
        if let whole = ticket.wholeBody() {
            response = ResponseBody(byteBuffer: whole)
        } else {
            let length = answer.headers[.contentLength].flatMap(Int.init)
            response = .paced(ticket.parts, contentLength: length, eventLoop: eventLoop)
        }
        return PassedResponse(
            Response(status: .init(code: answer.status), headers: fields, body: response), reported: answer.headers)
    }
}
