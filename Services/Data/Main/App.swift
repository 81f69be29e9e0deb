import DataService
import InternalProtocol
import Logging
import ServiceRuntime

/// data-service: `serve` (default), `migrate`, `pki-init [DIR]`, `permissions …` (see
/// `PermissionsCommand`).
@main
struct DataServiceMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        await ServiceCommand.exitOnError {
            guard arguments.first == "permissions" else {
                return try await ServiceCommand.main(DataService.self, arguments: arguments)
            }
            let configuration = RuntimeConfiguration(service: .data, reader: .fromEnvironment())
            Observability.bootstrapLogging(level: .warning)
            print(
                try await PermissionsCommand.run(
                    Array(arguments.dropFirst()), database: configuration.database, logger: Logger(label: "permissions")
                ))
        }
    }
}
