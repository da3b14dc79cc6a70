#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The few libm functions the radio model needs, in one place.

func _log(_ x: Double) -> Double { log(x) }
func _log10(_ x: Double) -> Double { log10(x) }
func _cos(_ x: Double) -> Double { cos(x) }
