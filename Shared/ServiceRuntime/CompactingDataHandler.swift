import AsyncHTTPClient
import NIOCore
import NIOHTTP2

/// Copies each DATA frame an internal HTTP/2 stream receives into a buffer of its own size.
/// NIOHTTP2's frame decoder hands DATA payloads out as slices of its read buffers (hundreds of
/// KiB each), and one retained slice keeps its whole read buffer alive: while a slow client held
/// a download back, the gateway's resident set reached 17 times the bytes it was holding.
final class CompactingDataHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .data(var frame) = unwrapInboundIn(data), case .byteBuffer(let bytes) = frame.data else {
            return context.fireChannelRead(data)
        }
        var compact = context.channel.allocator.buffer(capacity: bytes.readableBytes)
        compact.writeImmutableBuffer(bytes)
        frame.data = .byteBuffer(compact)
        context.fireChannelRead(wrapInboundOut(.data(frame)))
    }
}

extension HTTPClient.Configuration {
    /// Puts a ``CompactingDataHandler`` first on every HTTP/2 stream the client opens.
    mutating func compactingReceivedData() {
        http2StreamChannelDebugInitializer = { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(CompactingDataHandler(), position: .first)
            }
        }
    }
}
