import MessagingService
import ServiceRuntime

/// messaging-service: `serve` (default), `migrate`, `pki-init [DIR]`.
@main
struct MessagingServiceMain {
    static func main() async {
        await ServiceCommand.exitOnError {
            try await ServiceCommand.main(MessagingService.self, arguments: Array(CommandLine.arguments.dropFirst()))
        }
    }
}
