import HTTPTypes
import NIOCore

/// The head of a call on a call lane: what an HTTP request's head carries.
struct CallHead: Sendable {
    var method: HTTPRequest.Method
    /// The path and query, from the leading slash.
    var target: String
    var headers: HTTPFields
}

/// The head of a call's answer: status and headers.
struct AnswerHead: Sendable {
    var status: Int
    var headers: HTTPFields
}

/// One frame of a call lane, the internal stream on which a caller sends many requests at once
/// (``CallLane``): a call (head and whole body), the answer's head with its first part, further
/// parts, credit for more of them, the caller giving a call up, the callee failing an answer
/// midway, a heartbeat, and the lane's end.
enum CallFrame: LaneFrameCoding {
    case call(id: UInt32, CallHead, body: ByteBuffer)
    case answer(id: UInt32, AnswerHead, part: ByteBuffer, fin: Bool)
    case part(id: UInt32, ByteBuffer, fin: Bool)
    /// The caller consumed `bytes` more of the answer: the callee may send as many.
    case credit(id: UInt32, bytes: UInt32)
    /// The caller no longer wants the answer.
    case cancel(id: UInt32)
    /// The answer failed after its head went: the caller's response must end in an error.
    case failed(id: UInt32)
    case heartbeat
    /// The lane ends.
    case finish

    private enum Kind: UInt8 {
        case call = 1, answer, answerFin, part, partFin, credit, cancel, failed, heartbeat, finish
    }

    /// The most bytes of an answer in one frame.
    static let largestPart = 64 << 10

    func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .call(let id, let head, let body):
            Self.write(Kind.call.rawValue, id, into: &buffer) {
                LaneText.write(head.method.rawValue, into: &$0)
                LaneText.write(head.target, into: &$0)
                LaneText.write(head.headers, into: &$0)
                $0.writeImmutableBuffer(body)
            }
        case .answer(let id, let head, let part, let fin):
            Self.write((fin ? Kind.answerFin : .answer).rawValue, id, into: &buffer) {
                $0.writeInteger(UInt16(clamping: head.status))
                LaneText.write(head.headers, into: &$0)
                $0.writeImmutableBuffer(part)
            }
        case .part(let id, let part, let fin):
            Self.write((fin ? Kind.partFin : .part).rawValue, id, into: &buffer) { $0.writeImmutableBuffer(part) }
        case .credit(let id, let bytes):
            Self.write(Kind.credit.rawValue, id, into: &buffer) { $0.writeInteger(bytes) }
        case .cancel(let id): Self.write(Kind.cancel.rawValue, id, into: &buffer)
        case .failed(let id): Self.write(Kind.failed.rawValue, id, into: &buffer)
        case .heartbeat: Self.write(Kind.heartbeat.rawValue, 0, into: &buffer)
        case .finish: Self.write(Kind.finish.rawValue, 0, into: &buffer)
        }
    }

    static func decode(kind: UInt8, number id: UInt32, payload: ByteBuffer) -> CallFrame? {
        var payload = payload
        switch Kind(rawValue: kind) {
        case .call:
            guard let method = LaneText.read(&payload).flatMap({ HTTPRequest.Method($0) }),
                let target = LaneText.read(&payload),
                let headers = LaneText.readFields(&payload)
            else { return nil }
            return .call(id: id, CallHead(method: method, target: target, headers: headers), body: payload)
        case .answer, .answerFin:
            guard let status = payload.readInteger(as: UInt16.self), let headers = LaneText.readFields(&payload) else {
                return nil
            }
            return .answer(
                id: id, AnswerHead(status: Int(status), headers: headers), part: payload,
                fin: kind == Kind.answerFin.rawValue)
        case .part: return .part(id: id, payload, fin: false)
        case .partFin: return .part(id: id, payload, fin: true)
        case .credit: return payload.readInteger(as: UInt32.self).map { .credit(id: id, bytes: $0) }
        case .cancel: return .cancel(id: id)
        case .failed: return .failed(id: id)
        case .heartbeat: return .heartbeat
        case .finish: return .finish
        case nil: return nil
        }
    }
}
