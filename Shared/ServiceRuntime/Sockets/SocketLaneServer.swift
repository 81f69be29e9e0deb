import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import InternalProtocol
import Logging
import NIOCore
import ServiceLifecycle

/// A service's end of socket lanes: the gateway opens `GET /_lanes/socket` (one long stream per
/// lane) and opens public WebSockets on it; each socket names its route and carries the call
/// context of its upgrade request, and runs its route's handler in a task of its own until both
/// ends have finished. A service shutting down closes each socket (with 1001 unless the route
/// does it itself), refuses new ones, and ends the lane once its sockets have left.
struct SocketLaneServer: Sendable {
    /// Where the gateway opens lanes.
    static let path = "/_lanes/socket"
    /// A deadline for a socket's call context when the gateway sent none.
    static let defaultTimeout = TimeAmount.seconds(30)

    let routes: [String: PublicRoutes.SocketRoute]

    /// The lane's answer: its frames, for as long as the lane lives.
    func response(_ request: Request, context: RPCRequestContext) throws -> Response {
        guard context.caller == .gateway else { throw ErrorEnvelope.callerRefused }
        let largest = routes.values.map(\.options.bodyLimit).max() ?? 0
        return Response(
            status: .ok, headers: [.contentType: SocketFrame.contentType],
            body: ResponseBody { writer in
                let lane = SocketLane(maximumPayload: max(largest, 1 << 20) + (64 << 10)) { id, opening, lane in
                    open(id, opening, on: lane, context: context)
                }
                await lane.serve(request.body, to: &writer)
                try await writer.finish(nil)
            })
    }

    /// Opens socket `id` on its route, or refuses it with an envelope.
    private func open(_ id: UInt32, _ opening: SocketOpening, on lane: SocketLane, context: RPCRequestContext) {
        guard let socket = lane.accept(id) else { return }
        do {
            guard !lane.isDraining else {
                throw ErrorEnvelope(code: 503, message: "The service is shutting down", status: 503)
            }
            let path = String(opening.resource.prefix { $0 != "?" })
            guard let route = routes[path] else { throw ErrorEnvelope.endpointNotFound(method: "GET", path: path) }
            var fields = HTTPFields()
            for header in opening.headers {
                if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
            }
            var socketContext = context
            socketContext.call = try RPCEdgeMiddleware.callContext(
                fields, requestID: fields[.requestID] ?? CallContext.newRequestID(),
                defaultTimeout: Self.defaultTimeout, logger: context.logger)
            let (publicContext, query) = (
                try PublicRequestContext(context: socketContext), PublicRoutes.query(URI("/" + opening.resource))
            )
            lane.writer.enqueue(.accepted(socket: id))
            switch route.serving {
            case .task(let handler):
                let session = SocketSession(
                    socket: socket, route: route, handler: handler, context: publicContext, query: query)
                Task { await session.run() }
            case .pushed(let accept):
                accept(ServedSocket(socket), publicContext, query)
            }
        } catch {
            let envelope = ErrorEnvelope.from(error) ?? .internalError
            let body = (try? JSONEncoder.sortedKeys.encode(envelope)) ?? Data()
            lane.writer.enqueue(.refused(socket: id, status: envelope.status, body: ByteBuffer(bytes: body)))
            lane.remove(id)
        }
    }
}

/// One socket served by a service: the route's handler, then the close, then the wait for the
/// gateway's end of the socket.
struct SocketSession: Sendable {
    let socket: LaneSocket
    let route: PublicRoutes.SocketRoute
    let handler: PublicRoutes.SocketHandler
    let context: PublicRequestContext
    let query: [String: String]

    func run() async {
        let inbound = SocketInbound(socket, maximumPayload: route.options.bodyLimit)
        let outbound = SocketOutbound(socket)
        defer { socket.finish() }
        // A service shutting down closes its sockets with 1001 and lets the handshake finish.
        await withGracefulShutdownHandler {
            await serve(inbound, outbound)
        } onGracefulShutdown: {
            Task { await outbound.close(code: SocketCloseCode.goingAway) }
        }
    }

    /// Runs the handler, closes the socket as it asks, and waits for the gateway to end its side.
    private func serve(_ inbound: SocketInbound, _ outbound: SocketOutbound) async {
        do {
            try await handler(inbound, outbound, context, query)
        } catch is CancellationError {
        } catch {
            context.call.logger.error("socket handler failed", metadata: ["error": "\(error)"])
            await outbound.close(code: SocketCloseCode.internalError)
        }
        await outbound.close(code: inbound.closeReceived?.closeCode ?? SocketCloseCode.normal)
        await inbound.drain()
    }
}
