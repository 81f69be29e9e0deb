import AsyncAlgorithms
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import ServiceLifecycle

extension PublicRoutes {
    /// A handler of a socket route: reads the client's frames from `inbound` (nil once the
    /// client closed or was lost) and sends its own on `outbound`, at any time and from any
    /// task. When it returns the socket closes: with 1000 unless it closed otherwise, echoing
    /// the client's code when the client closed first. The last argument is the upgrade
    /// request's query parameters (where socket protocols put their options).
    public typealias SocketHandler =
        @Sendable (SocketInbound<RequestBody>, SocketOutbound, PublicRequestContext, [String: String]) async throws -> Void

    /// Declares a socket route: `GET path` which the gateway answers with a WebSocket upgrade
    /// and relays, frame by frame, over one internal stream to `handler`.
    public mutating func socket(
        _ path: String, permission: RoutePermission? = nil, options: RouteOptions = .socket(), _ handler: @escaping SocketHandler
    ) {
        precondition(options.transfer == .bidirectional, "a socket route needs RouteOptions.socket")
        stream(.get, path, permission: permission, options: options) { request, context in
            Response(
                status: .ok, headers: [.contentType: SocketFrame.contentType],
                body: ResponseBody { writer in
                    try await SocketSession(options: options, context: context, query: Self.query(request)).serve(request.body, to: &writer, handler)
                    try await writer.finish(nil)
                })
        }
    }
}

extension PublicRoutes {
    /// A request's query parameters, decoded (the last of a repeated name wins).
    public static func query(_ request: Request) -> [String: String] {
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
        return query
    }
}

extension RouteOptions {
    /// A socket route: frames of up to `maximumFrame` bytes, the stream closed after
    /// `idleTimeout` without a frame or heartbeat (each end sends a heartbeat after a quarter of
    /// it in silence).
    public static func socket(maximumFrame: Int = 1 << 20, idleTimeout: Duration = .seconds(60)) -> RouteOptions {
        RouteOptions(bodyLimit: maximumFrame, transfer: .bidirectional, idleTimeout: idleTimeout)
    }
}

/// One socket served by a service: runs the route's handler beside the heartbeat and writes
/// what it sends to the stream's answer.
struct SocketSession: Sendable {
    let options: RouteOptions
    let context: PublicRequestContext
    let query: [String: String]

    /// Serves the socket whose client frames arrive on `body`, writing frames to `writer` until
    /// both ends have finished.
    func serve(
        _ body: RequestBody, to writer: inout any ResponseBodyWriter, _ handler: @escaping PublicRoutes.SocketHandler
    ) async throws {
        let outbound = SocketOutbound()
        let idle = options.idleTimeout ?? .seconds(60)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                guard !options.handlesShutdown else { return try await run(handler, body: body, outbound: outbound) }
                // A service shutting down closes its sockets with 1001 and lets the handshake finish.
                try await withGracefulShutdownHandler {
                    try await run(handler, body: body, outbound: outbound)
                } onGracefulShutdown: {
                    Task { await outbound.close(code: SocketCloseCode.goingAway) }
                }
            }
            group.addTask {
                do {
                    try await outbound.keepAlive(interval: idle / 4, idle: idle)
                } catch {
                    outbound.finish()
                    throw error
                }
            }
            for await chunk in outbound.bytes { try await writer.write(chunk) }
            group.cancelAll()
            while let result = await group.nextResult() {
                if case .failure(let error) = result, !(error is CancellationError) { throw error }
            }
        }
    }

    /// Runs the handler, closes the socket as it asks, and waits for the gateway to end its side
    /// (so the stream never ends while the gateway still sends).
    private func run(_ handler: PublicRoutes.SocketHandler, body: RequestBody, outbound: SocketOutbound) async throws {
        defer { outbound.finish() }
        let inbound = SocketInbound(body, maximumPayload: options.bodyLimit, liveness: outbound.liveness)
        do {
            try await handler(inbound, outbound, context, query)
        } catch is CancellationError {
            return
        } catch {
            context.call.logger.error("socket handler failed", metadata: ["error": "\(error)"])
            await outbound.close(code: SocketCloseCode.internalError)
        }
        await outbound.close(code: inbound.closeReceived?.closeCode ?? SocketCloseCode.normal)
        try await inbound.drain()
    }
}

/// The WebSocket close codes (RFC 6455 §7.4.1) this project sends.
public enum SocketCloseCode {
    /// The purpose of the socket is fulfilled.
    public static let normal: UInt16 = 1000
    /// The server is going away (shutting down, or its stream to the service was lost).
    public static let goingAway: UInt16 = 1001
    /// A frame broke the protocol.
    public static let protocolError: UInt16 = 1002
    /// A frame was larger than the route allows.
    public static let tooLarge: UInt16 = 1009
    /// The server failed.
    public static let internalError: UInt16 = 1011
    /// A close that carried no code (never sent in a frame).
    public static let noStatus: UInt16 = 1005
}

extension SocketFrame {
    /// The content type of an internal socket stream.
    public static let contentType = "application/x-baas-socket"
}
