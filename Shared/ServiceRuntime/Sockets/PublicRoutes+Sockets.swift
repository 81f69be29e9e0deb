import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
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
    package typealias SocketHandler =
        @Sendable (SocketInbound, SocketOutbound, PublicRequestContext, [String: String]) async throws -> Void

    /// Declares a socket route: `GET path` which the gateway answers with a WebSocket upgrade
    /// and relays, frame by frame, over a socket lane (``SocketLaneServer``) to `handler`.
    /// Called directly, without the gateway's upgrade, the path answers 426.
    package mutating func socket(
        _ path: String, permission: RoutePermission? = nil, options: RouteOptions = .socket(), doc: RouteDoc,
        _ handler: @escaping SocketHandler
    ) {
        declareSocket(path, permission: permission, options: options, doc: doc, .task(handler))
    }

    /// A socket route served without a task: `accept` is called as each socket opens (it must
    /// not wait) and keeps the ``ServedSocket``, which pushes the client's frames to it. The
    /// route closes its own sockets when the process shuts down.
    package typealias SocketAcceptor = @Sendable (ServedSocket, PublicRequestContext, [String: String]) -> Void

    /// Declares a socket route served by `accept` (see ``SocketAcceptor``).
    package mutating func socket(
        _ path: String, permission: RoutePermission? = nil, options: RouteOptions = .socket(), doc: RouteDoc,
        accept: @escaping SocketAcceptor
    ) {
        declareSocket(path, permission: permission, options: options, doc: doc, .pushed(accept))
    }

    private mutating func declareSocket(
        _ path: String, permission: RoutePermission?, options: RouteOptions, doc: RouteDoc,
        _ serving: SocketRoute.Serving
    ) {
        precondition(options.transfer == .bidirectional, "a socket route needs RouteOptions.socket")
        stream(.get, path, permission: permission, options: options, doc: doc) { _, _ in
            throw ErrorEnvelope(code: 426, message: "This endpoint takes a WebSocket upgrade", status: 426)
        }
        sockets[path] = SocketRoute(options: options, serving: serving)
    }

    /// A socket route's limits and how it is served.
    struct SocketRoute: Sendable {
        enum Serving: Sendable {
            /// A handler reading in a task of its own.
            case task(SocketHandler)
            /// An acceptor the frames are pushed to.
            case pushed(SocketAcceptor)
        }

        let options: RouteOptions
        let serving: Serving
    }
}

extension PublicRoutes {
    /// A request's query parameters, decoded (the last of a repeated name wins).
    package static func query(_ request: Request) -> [String: String] {
        query(request.uri)
    }

    static func query(_ uri: URI) -> [String: String] {
        var query: [String: String] = [:]
        for (name, value) in uri.queryParameters { query[String(name)] = String(value) }
        return query
    }
}

extension RouteOptions {
    /// A socket route: frames of up to `maximumFrame` bytes. Liveness is the lane's: both ends
    /// of a socket lane send heartbeats and give it up after ``SocketLaneTiming/idleLimit`` of silence.
    package static func socket(maximumFrame: Int = 1 << 20) -> RouteOptions {
        RouteOptions(bodyLimit: maximumFrame, transfer: .bidirectional)
    }
}

/// The WebSocket close codes (RFC 6455 §7.4.1) this project sends.
package enum SocketCloseCode {
    /// The purpose of the socket is fulfilled.
    package static let normal: UInt16 = 1000
    /// The server is going away (shutting down, or its stream to the service was lost).
    package static let goingAway: UInt16 = 1001
    /// A frame broke the protocol.
    package static let protocolError: UInt16 = 1002
    /// A frame was larger than the route allows.
    package static let tooLarge: UInt16 = 1009
    /// The server failed.
    package static let internalError: UInt16 = 1011
    /// A close that carried no code (never sent in a frame).
    package static let noStatus: UInt16 = 1005
}

extension SocketFrame {
    /// The content type of a socket lane.
    package static let contentType = "application/x-baas-socket-lane"
}
