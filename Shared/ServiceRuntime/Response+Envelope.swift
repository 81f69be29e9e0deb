import Foundation
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import PostgresNIO

extension Response {
    /// A JSON response with the given status.
    package static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONEncoder.sortedKeys.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A response whose body is JSON text that is already encoded.
    package static func jsonText(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The longest error message answered, in characters: messages name what the request named
    /// (an id, a table, a path), and a 10,000-character id was answered back whole.
    package static let maximumErrorMessageLength = 512

    /// The response carrying an error envelope, with the envelope's status (its message cut to
    /// ``maximumErrorMessageLength`` characters).
    package static func envelope(_ envelope: ErrorEnvelope) -> Response {
        var envelope = envelope
        if envelope.message.count > maximumErrorMessageLength {
            envelope.message = envelope.message.prefix(maximumErrorMessageLength - 1) + "…"
        }
        // Encoding three plain fields cannot fail; fall back to an empty body all the same.
        let data = (try? JSONEncoder.sortedKeys.encode(envelope)) ?? Data()
        return Response(
            status: .init(code: envelope.status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension Response {
    /// The response telling the gateway that `userID`'s sessions or roles changed, so that it
    /// drops the user's cached tokens at once.
    package func endingSessions(of userID: String?) -> Response {
        guard let userID else { return self }
        var response = self
        response.headers[.sessionsChanged] = userID
        return response
    }
}

extension Response {
    /// The response for any error at an edge: an envelope as ``ErrorEnvelope/from(_:)`` maps it
    /// (logged at debug, as the client's own doing), else a 500 whose details go only to the log.
    package static func error(_ error: any Error, logger: Logger) -> Response {
        if let envelope = ErrorEnvelope.from(error) {
            logger.debug("request failed", metadata: ["code": "\(envelope.code)", "status": "\(envelope.status)"])
            return .envelope(envelope)
        }
        logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
        return .envelope(.internalError)
    }
}

extension ErrorEnvelope {
    /// A connection to PostgreSQL that failed or was ended (the server stopping: SQLSTATE class 08,
    /// 57P01–57P03), which a request meets before the database's health check does.
    static func isLostDatabase(_ error: PSQLError) -> Bool {
        if [.connectionError, .serverClosedConnection, .clientClosedConnection].contains(error.code) { return true }
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
    }

    /// Maps any error to the envelope a client sees: envelopes pass through, Hummingbird's own
    /// HTTP errors keep their status, PostgreSQL data exceptions are 400, anything else is a logged
    /// 500 without details.
    package static func from(_ error: any Error) -> ErrorEnvelope? {
        switch error {
        case let envelope as ErrorEnvelope:
            return envelope
        case let transaction as PostgresTransactionError:
            return transaction.closureError.flatMap(from) ?? transaction.beginError.flatMap(from)
        case let database as PSQLError where database.serverInfo?[.sqlState]?.hasPrefix("22") == true:
            // A data exception: a value from the request PostgreSQL cannot take (a NUL character
            // in text, a number out of range), whichever service bound it.
            return .invalidValue
        case let database as PSQLError where Self.isLostDatabase(database):
            return .databaseUnavailable
        case _ where String(reflecting: type(of: error)) == "_ConnectionPoolModule.ConnectionPoolError":
            // PostgresNIO's pool gave up connecting (its circuit breaker, a minute into an
            // outage); the type lives in a module this package does not import.
            return .databaseUnavailable
        case let http as HTTPError:
            if http.status == .contentTooLarge {
                return ErrorEnvelope(code: 413, message: "Request body too large", status: 413)
            }
            return ErrorEnvelope(
                code: Int(http.status.code), message: http.body ?? http.status.reasonPhrase,
                status: Int(http.status.code))
        default:
            return nil
        }
    }
}
