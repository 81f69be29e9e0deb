import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOWebSocket
import ServiceRuntime
import Synchronization

/// A socket opened on its lane, waiting for the upgrade to complete.
struct OpenedSocket: Sendable {
    let socket: InternalSocket
    let route: RouteDescriptor

    /// The relay of the upgraded connection.
    func handler() -> SocketRelay {
        SocketRelay(socket: socket, route: route)
    }
}

/// Carries a socket route's relay from the route's handler, which runs on the upgrade request's
/// head, to the upgraded connection.
final class SocketSlot: Sendable {
    private let relay = Mutex<OpenedSocket?>(nil)

    /// Leaves the relay of an opened socket.
    func fill(_ relay: OpenedSocket) {
        self.relay.withLock { $0 = relay }
    }

    /// The relay left here, taken out.
    func take() -> OpenedSocket? {
        relay.withLock { $0.take() }
    }
}

extension GatewayService {
    /// The gateway's answer to WebSocket upgrades: the request runs through the public router
    /// like any other (key, identity, route, permission), and a socket route opens its internal
    /// stream and leaves the relay; anything else is answered with the router's response.
    static func webSocketUpgrades(responder: GatewayRoutes, maximumFrameSize: Int) -> WebSocketUpgrades {
        WebSocketUpgrades(maximumFrameSize: maximumFrameSize) { request, channel, logger in
            var context = GatewayRequestContext(source: .init(channel: channel, logger: logger))
            let slot = SocketSlot()
            context.socketSlot = slot
            let response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch {
                response = .error(error, logger: logger)
            }
            guard response.status == .switchingProtocols, let relay = slot.take() else {
                slot.take()?.socket.release()
                return .refuse(response)
            }
            return .upgrade(
                { channel in try channel.pipeline.syncOperations.addHandler(relay.handler()) },
                abandon: { relay.socket.release() })
        }
    }
}
