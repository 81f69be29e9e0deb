import InternalProtocol
import Logging
import ServiceRuntime
import UsersService

/// users-service: `serve`, `migrate`, `pki-init`, and `apps …` (see `AppsCommand`).
@main
struct UsersServiceMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        await ServiceCommand.exitOnError {
            guard arguments.first == "apps" else {
                return try await ServiceCommand.main(UsersService.self, arguments: arguments)
            }
            let configuration = RuntimeConfiguration(service: .users, reader: .fromEnvironment())
            Observability.bootstrapLogging(level: .warning)
            let output = try await AppsCommand.run(
                Array(arguments.dropFirst()), database: configuration.database, logger: Logger(label: "apps"))
            print(output)
        }
    }
}
