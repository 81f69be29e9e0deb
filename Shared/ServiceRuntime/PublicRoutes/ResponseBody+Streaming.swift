import Hummingbird
import NIOCore

extension ResponseBody {
    /// A body written from `chunks` at the pace of the connection on `eventLoop`. Hummingbird's
    /// writer hands each chunk to the event loop without waiting for it, so a producer faster than
    /// the connection (TLS and HTTP/2 framing run there) would queue chunks ahead of the channel's
    /// writability — about 100 MiB per stream was measured. After each chunk this waits until the
    /// event loop has taken it, so the next write sees the channel's real writability.
    package static func paced<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, contentLength: Int?, eventLoop: any EventLoop
    ) -> ResponseBody where Chunks.Element == ByteBuffer {
        ResponseBody(contentLength: contentLength) { writer in
            for try await chunk in chunks {
                try await writer.write(chunk)
                try await eventLoop.submit {}.get()
            }
            try await writer.finish(nil)
        }
    }
}
