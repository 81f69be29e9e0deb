import Configuration
import GatewayService
import InternalProtocol
import Logging
import ServiceRuntime

/// gateway: `serve` (default) or `pki-init [DIR]`.
@main
struct GatewayMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        await ServiceCommand.exitOnError {
            let reader = ConfigReader.fromEnvironment()
            let runtime = RuntimeConfiguration(service: .gateway, reader: reader)
            guard arguments.first ?? "serve" == "serve" else {
                return try ServiceCommand.runCommon(arguments, configuration: runtime)
            }
            Observability.bootstrapLogging(level: runtime.logLevel)
            let logger = Logger(label: "gateway")
            let tls = try TLSMaterial(directory: runtime.pkiDirectory, name: "gateway")
            let parts = try GatewayService.parts(
                runtime: runtime, configuration: GatewayConfiguration(reader: reader), tls: tls, logger: logger)
            try await ServiceCommand.runUntilSignalled(parts, logger: logger)
        }
    }
}
