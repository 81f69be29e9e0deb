import AsyncHTTPClient
import NIOCore
import NIOHTTP2

/// Hands a connection's decrypted bytes to the HTTP/2 decoder in pieces of their own storage,
/// at most 16 KiB each. TLS decrypts everything one event-loop tick read into one buffer
/// (hundreds of KiB under a fast sender), the decoder hands DATA payloads out as slices of it,
/// and one slice waiting in a stream's window (8 MiB in AsyncHTTPClient) keeps the whole buffer
/// alive: while a client read a download at 20 MiB/s, the gateway held 17 times the bytes in
/// flight (1,161 MiB resident for a 64 MiB body).
final class PlaintextPieces: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    static let pieceSize = 16 << 10

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard bytes.readableBytes > Self.pieceSize else { return context.fireChannelRead(data) }
        while bytes.readableBytes > 0 {
            let slice = bytes.readSlice(length: min(Self.pieceSize, bytes.readableBytes))!
            var piece = context.channel.allocator.buffer(capacity: slice.readableBytes)
            piece.writeImmutableBuffer(slice)
            context.fireChannelRead(wrapInboundOut(piece))
        }
    }
}

extension HTTPClient.Configuration {
    /// Puts ``PlaintextPieces`` before the HTTP/2 handler of every connection the client opens.
    mutating func boundReceiveBuffers() {
        http2ConnectionDebugInitializer = { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(
                    PlaintextPieces(), position: .before(try pipeline.handler(type: NIOHTTP2Handler.self)))
            }
        }
    }
}
