package dev.redlockd.server;

import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * Reads each flag's {@code ${env:NAME:-default}} from a given environment instead of this
 * process's own: the healthcheck parses a running server's flags with that server's
 * environment, and tests pass one in. A flag on the command line still wins.
 */
final class EnvironmentDefaults implements CommandLine.IDefaultValueProvider {
  private final Map<String, String> env;
  /** Each option's annotated default by its first name (picocli asks this provider before reading it itself). */
  private final Map<String, String> declared = new HashMap<>();

  /** For the options declared in {@code commands}' fields. */
  EnvironmentDefaults(Map<String, String> env, Class<?>... commands) {
    this.env = Map.copyOf(env);
    for (Class<?> command : commands) {
      for (Field field : command.getDeclaredFields()) {
        Option option = field.getAnnotation(Option.class);
        if (option != null) {
          declared.put(option.names()[0], option.defaultValue());
        }
      }
    }
  }

  @Override
  public String defaultValue(ArgSpec arg) {
    if (!(arg instanceof OptionSpec option)) {
      return null;
    }
    String raw = declared.get(option.names()[0]);
    Optional<String> variable = ServerConfig.variable(raw);
    if (variable.isEmpty()) {
      return null; // not read from the environment: the flag's own default
    }
    String value = env.containsKey(variable.get()) ? env.get(variable.get()) : ServerConfig.fallback(raw).orElseThrow();
    // picocli expands ${...} in what a provider returns: a password holding "${" must stay as it is.
    return value.replace("${", "$${");
  }
}
