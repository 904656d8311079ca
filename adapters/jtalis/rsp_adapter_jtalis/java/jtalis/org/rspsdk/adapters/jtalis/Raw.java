package org.rspsdk.adapters.jtalis;

import com.jtalis.core.plengine.logic.Atom;

/** Prolog text JTALIS passes through as it is (an already rendered term). */
final class Raw extends Atom<String> {
  private static final long serialVersionUID = 1L;

  Raw(String prolog) {
    super(prolog);
  }
}
