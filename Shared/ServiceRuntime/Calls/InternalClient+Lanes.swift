import InternalProtocol
import Logging
import NIOCore

extension InternalClient {
    /// Sends `head` with its whole `body` as a call on a lane to `service` and waits for the
    /// answer's head until the call's deadline (504 after it). A lane lost under the call is 503,
    /// tried once more first when `retryingLost` allows (idempotent calls); a call that never
    /// left (its lane had just ended) is always sent again.
    func callOnLane(
        _ head: CallHead, body: ByteBuffer, to service: ServiceName, context: CallContext, eventLoop: any EventLoop,
        retryingLost: Bool
    ) async throws -> (AnswerHead, CallTicket) {
        guard let base = peers[service] else { throw ErrorEnvelope.serviceUnavailable(service) }
        var tries = 0
        while true {
            tries += 1
            guard let lane = callLanes.lane(to: service, base: base, logger: context.logger) else {
                context.logger.warning("every call lane is full", metadata: ["peer": "\(service.executable)"])
                throw ErrorEnvelope.serviceUnavailable(service)
            }
            guard let ticket = lane.start(head, body: body) else {
                if tries < 2 { continue }
                throw ErrorEnvelope.serviceUnavailable(service)
            }
            do {
                return (try await ticket.head(by: context.deadline, on: eventLoop), ticket)
            } catch PendingCall.Failure.lost where retryingLost && tries < 2 && !Task.isCancelled {
                context.logger.debug("retrying after a lost lane", metadata: ["peer": "\(service.executable)"])
            } catch let failure as PendingCall.Failure {
                throw Self.failure(failure, service: service, context: context)
            }
        }
    }

    /// The envelope for a call on a lane that ended without its answer's head.
    private static func failure(_ failure: PendingCall.Failure, service: ServiceName, context: CallContext) -> any Error
    {
        switch failure {
        case .deadline: return ErrorEnvelope.deadlineExceeded(service)
        case .lost where Task.isCancelled: return CancellationError()
        case .lost, .failed, .overrun:
            context.logger.warning(
                "internal call failed", metadata: ["peer": "\(service.executable)", "error": "\(failure)"])
            return ErrorEnvelope.serviceUnavailable(service)
        }
    }
}
