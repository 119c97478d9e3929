package dev.redlockd.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Ends each option's --help description with the environment variable it reads (from its
 * {@code ${env:NAME:-...}} default), so that the variable is found where the flag is, and a flag
 * added later is covered without anyone remembering to.
 */
final class EnvironmentHelp implements CommandLine.IModelTransformer {

  @Override
  public CommandSpec transform(CommandSpec spec) {
    // Removed and added back in order, so that --help keeps the declared order.
    List<OptionSpec> options = new ArrayList<>(spec.options());
    options.forEach(spec::remove);
    for (OptionSpec option : options) {
      Optional<String> variable = ServerConfig.variable(option.defaultValueString(false));
      if (variable.isEmpty() || option.hidden()) {
        spec.addOption(option);
        continue;
      }
      String[] description = option.description().clone();
      int last = description.length - 1;
      description[last] = description[last] + " Environment: " + variable.get() + ".";
      spec.addOption(OptionSpec.builder(option).description(description).build());
    }
    return spec;
  }
}
