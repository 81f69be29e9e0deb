import InternalProtocol
import Logging
import ServiceRuntime
import UsersService

/// users-service: `serve`, `migrate`, `pki-init`, `apps …` (see `AppsCommand`) and `roles …`
/// (see `RolesCommand`).
@main
struct UsersServiceMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        await ServiceCommand.exitOnError {
            guard let command = arguments.first, ["apps", "roles"].contains(command) else {
                return try await ServiceCommand.main(UsersService.self, arguments: arguments)
            }
            let configuration = RuntimeConfiguration(service: .users, reader: .fromEnvironment())
            Observability.bootstrapLogging(level: .warning)
            let rest = Array(arguments.dropFirst())
            let logger = Logger(label: command)
            let output =
                command == "apps"
                ? try await AppsCommand.run(rest, database: configuration.database, logger: logger)
                : try await RolesCommand.run(rest, database: configuration.database, logger: logger)
            print(output)
        }
    }
}
