import Hummingbird
import Logging
import NIOCore

/// The public server's request context: Hummingbird's storage plus the request id the edge
/// middleware settles on.
package struct GatewayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The request id echoed in `x-request-id` and passed to every service.
    package var requestID: String
    /// The client's IP address (of the TCP peer; an HTTP/2 stream asks its connection).
    package let clientAddress: String?
    /// The event loop of the client's connection, which passed-through answers are paced by.
    package let eventLoop: any EventLoop
    /// Where a socket route leaves its relay, for a request that asks for a WebSocket upgrade;
    /// nil for every other request.
    var socketSlot: SocketSlot?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        requestID = ""
        clientAddress = (source.channel.remoteAddress ?? source.channel.parent?.remoteAddress)?.ipAddress
        eventLoop = source.channel.eventLoop
    }
}
