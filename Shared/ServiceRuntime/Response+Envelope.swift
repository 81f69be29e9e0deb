import Foundation
import Hummingbird
import InternalProtocol
import NIOCore

extension Response {
    /// A JSON response with the given status.
    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONEncoder.sortedKeys.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The response carrying an error envelope, with the envelope's status.
    public static func envelope(_ envelope: ErrorEnvelope) -> Response {
        // Encoding three plain fields cannot fail; fall back to an empty body all the same.
        let data = (try? JSONEncoder.sortedKeys.encode(envelope)) ?? Data()
        return Response(
            status: .init(code: envelope.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension ErrorEnvelope {
    /// Maps any error to the envelope a client sees: envelopes pass through, Hummingbird's own
    /// HTTP errors keep their status, anything else is a logged 500 without details.
    public static func from(_ error: any Error) -> ErrorEnvelope? {
        switch error {
        case let envelope as ErrorEnvelope:
            return envelope
        case let http as HTTPError:
            if http.status == .contentTooLarge { return .payloadTooLarge(limit: 0).withMessage("Request body too large") }
            return ErrorEnvelope(code: Int(http.status.code), message: http.body ?? http.status.reasonPhrase,
                                 status: Int(http.status.code))
        default:
            return nil
        }
    }

    /// The same envelope with another message.
    public func withMessage(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: code, message: message, status: status)
    }
}
