import Hummingbird
import Logging
import NIOCore
import NIOWebSocket
import ServiceRuntime
import Synchronization

/// Carries a socket route's relay from the route's handler, which runs on the upgrade request's
/// head, to the upgraded connection.
final class SocketSlot: Sendable {
    private let relay = Mutex<SocketRelay?>(nil)

    /// Leaves the relay of an opened socket.
    func fill(_ relay: SocketRelay) {
        self.relay.withLock { $0 = relay }
    }

    /// The relay left here, taken out.
    func take() -> SocketRelay? {
        relay.withLock { $0.take() }
    }
}

extension GatewayService {
    /// The gateway's answer to WebSocket upgrades: the request runs through the public router
    /// like any other (key, identity, route, permission), and a socket route opens its internal
    /// stream and leaves the relay; anything else is answered with the router's response.
    static func webSocketUpgrades(router: Router<GatewayRequestContext>, maximumFrameSize: Int) -> WebSocketUpgrades {
        let responder = router.buildResponder()
        return WebSocketUpgrades(maximumFrameSize: maximumFrameSize) { request, channel, logger in
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
                { connection, logger in await relay.run(connection, logger: logger) }, abandon: { relay.socket.release() })
        }
    }
}
