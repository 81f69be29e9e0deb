import InternalProtocol
import NIOCore
import ServiceRuntime

/// Asks every backend for its readiness at once, each within a deadline, so one slow or dead
/// service is reported down instead of holding up the answer.
struct ServiceReadiness: Sendable {
    let peers: InternalClient
    let deadline: TimeAmount

    /// One entry per service, the gateway first, then the backends in their fixed order.
    struct Entry: Codable, Sendable, Equatable {
        let name: String
        let ready: Bool
        let detail: String?
    }

    func all(context: CallContext) async -> [Entry] {
        let limited = context.limited(to: deadline)
        let statuses = await withTaskGroup(of: (ServiceName, SystemStatus.Response).self) { group in
            for service in ServiceName.backends {
                group.addTask { (service, await status(of: service, context: limited)) }
            }
            var statuses: [ServiceName: SystemStatus.Response] = [:]
            for await (service, status) in group { statuses[service] = status }
            return statuses
        }
        let gateway = Entry(name: ServiceName.gateway.executable, ready: true, detail: nil)
        return [gateway]
            + ServiceName.backends.map { service in
                let status = statuses[service]
                return Entry(name: service.executable, ready: status?.ready ?? false, detail: status?.detail)
            }
    }

    func status(of service: ServiceName, context: CallContext) async -> SystemStatus.Response {
        do {
            return try await peers.call(SystemStatus.self, Empty(), on: service, context: context)
        } catch let envelope as ErrorEnvelope {
            return .init(service: service, ready: false, detail: envelope.message)
        } catch {
            return .init(service: service, ready: false, detail: "unreachable")
        }
    }
}
