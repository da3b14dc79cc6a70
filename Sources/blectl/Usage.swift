/// The usage text, printed on stderr with every usage error (exit 64) and on
/// stdout for `blectl --help`.
enum Usage {
    static let text = """
        usage: blectl [--socket PATH] [--json] COMMAND [ARGUMENTS]

        Agent commands:
          status                          show the agent's state
          reload                          re-read and validate the agent's config
          shutdown                        stop the agent
          events [--kind KIND]...         stream events until interrupted
                                          (kinds: discovered connected disconnected value state plugin)
          call METHOD [PARAMS_JSON]       call any method, such as a plugin's
          fleet status                    show the MQTT fleet connection, outbox depth and last error

        Central commands (the central role):
          scan start [--duration SECONDS] [--service UUID]... [--rssi DBM] [--name PATTERN] [--duplicates]
          scan stop
          devices                         list discovered devices
          connect DEVICE                  connect to DEVICE (an id as `blectl devices` lists it)
          disconnect DEVICE
          services DEVICE                 list the GATT services of a connected device
          read DEVICE CHARACTERISTIC      read a value (CHARACTERISTIC is a UUID)
          write DEVICE CHARACTERISTIC VALUE [--hex] [--without-response]
                                          write VALUE as UTF-8 text, or as hex bytes with --hex
          subscribe DEVICE CHARACTERISTIC stream the characteristic's values until interrupted

        Peripheral commands (the peripheral role):
          advertise start [--name NAME] [--service UUID]...
          advertise stop
          published                       list the services this node publishes
          update CHARACTERISTIC VALUE [--hex]
                                          notify subscribers of a new value (UTF-8, or hex with --hex)
          subscribers [CHARACTERISTIC]    list the centrals subscribed

        Sensor gateway commands (the SensorGateway plugin):
          gateway devices [--kind KIND] [--sort address|name|rssi|lastSeen] [--limit N] [--offset N]
                                          list the devices heard and their latest readings
          gateway device ADDRESS          one device's readings and counters
          gateway stats                   reports in, decoded, repeats dropped, decode errors, evictions
          gateway readings                stream reading updates until interrupted

        Options:
          --socket PATH   the agent's control socket (default: $BLEAGENT_SOCKET, else /run/bleagent/control.sock)
          --json          print the raw JSON result instead of a table
          --help          print this text

        Exit status: 0 ok, 1 error from the agent, 64 usage error, 69 agent unreachable.

        """
}
