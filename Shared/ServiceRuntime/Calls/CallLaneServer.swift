import Foundation
import HTTPTypes
import Hummingbird
import InternalProtocol
import Logging
import NIOCore

/// A service's end of call lanes: a peer opens `GET /_lanes/call` (one long stream per lane)
/// and sends calls on it. Each call becomes a request to the router of the service's buffered
/// public routes — the edge middleware reads its context headers (the caller is the lane's,
/// proved by the lane's own request), its route runs, and the answer goes back in parts within
/// the caller's credit.
struct CallLaneServer: Sendable {
    /// Where peers open lanes.
    static let path = "/_lanes/call"
    /// The largest call a lane takes, head and body (callers send bodies of up to 64 KiB on
    /// lanes, larger ones on streams of their own).
    static let maximumCall = 1 << 20

    /// The router every call goes to.
    let responder: RouterResponder<RPCRequestContext>

    /// The lane's answer: its frames, for as long as the lane lives.
    func response(_ request: Request, context: RPCRequestContext) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/octet-stream"],
            body: ResponseBody { writer in
                let lane = CalleeLane(maximumPayload: Self.maximumCall) { [responder] call, head, body in
                    await Self.answer(call, head: head, body: body, responder: responder, context: context)
                }
                await lane.serve(request.body, to: &writer)
                try await writer.finish(nil)
            })
    }

    private static func answer(
        _ call: ServedCall, head: CallHead, body: ByteBuffer, responder: RouterResponder<RPCRequestContext>,
        context: RPCRequestContext
    ) async {
        let request = Request(
            head: HTTPRequest(
                method: head.method, scheme: nil, authority: nil, path: head.target, headerFields: head.headers),
            body: RequestBody(buffer: body))
        let sender = AnswerSender(call)
        do {
            let response = try await responder.respond(to: request, context: context)
            sender.head = AnswerHead(status: response.status.code, headers: Self.headers(of: response))
            try await response.body.write(AnswerBodyWriter(sender: sender))
            if !sender.sentEnd { try await sender.finish() }
        } catch {
            if !(error is CancellationError) {
                context.logger.error("call on a lane failed", metadata: ["error": "\(error)"])
            }
            await sender.fail()
        }
    }

    /// The answer's headers, with the body's length when it is known.
    private static func headers(of response: Response) -> HTTPFields {
        var headers = response.headers
        if headers[.contentLength] == nil, let length = response.body.contentLength {
            headers[.contentLength] = String(length)
        }
        return headers
    }
}

/// Sends one call's answer: the head with the first part, then further parts of at most
/// ``CallFrame/largestPart`` bytes, each within the caller's credit. One written buffer is held
/// back, so an answer written whole goes as one frame. Used by the call's task alone.
final class AnswerSender {
    private let call: ServedCall
    /// The head, until it has gone with the first part.
    var head: AnswerHead?
    private var held: ByteBuffer?
    private var sentHead = false
    /// Whether the answer's last part has gone.
    private(set) var sentEnd = false

    init(_ call: ServedCall) {
        self.call = call
    }

    func write(_ buffer: ByteBuffer) async throws {
        if let held { try await send(held, fin: false) }
        held = buffer
    }

    func finish() async throws {
        let last = held ?? ByteBuffer()
        held = nil
        try await send(last, fin: true)
    }

    /// Ends an answer that cannot be whole: a 500 in its place when its head has not gone, a
    /// failure the caller's response ends with otherwise.
    func fail() async {
        if !sentHead {
            head = AnswerHead(status: 500, headers: [.contentType: "application/json"])
            var body = ByteBuffer()
            body.writeString(#"{"code":500,"message":"Internal server error"}"#)
            try? await send(body, fin: true)
        } else if !sentEnd {
            call.lane.writer.enqueue(CallFrame.failed(id: call.id))
        }
    }

    private func send(_ bytes: ByteBuffer, fin: Bool) async throws {
        var bytes = bytes
        repeat {
            let piece = bytes.readSlice(length: min(bytes.readableBytes, CallFrame.largestPart))!
            let last = fin && bytes.readableBytes == 0
            guard await call.reserve(piece.readableBytes) else { throw CancellationError() }
            let frame: CallFrame
            if let head {
                frame = .answer(id: call.id, head, part: piece, fin: last)
                (self.head, sentHead) = (nil, true)
            } else {
                frame = .part(id: call.id, piece, fin: last)
            }
            guard await call.lane.writer.send(frame) else { throw CancellationError() }
            sentEnd = last
        } while bytes.readableBytes > 0
    }
}

/// Hummingbird's writer of a response body, writing to an ``AnswerSender``.
struct AnswerBodyWriter: ResponseBodyWriter {
    let sender: AnswerSender

    func write(_ buffer: ByteBuffer) async throws {
        try await sender.write(buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await sender.finish()
    }
}
