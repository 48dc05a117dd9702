// The Markdown editor component: CodeMirror 6 (https://codemirror.net, MIT), chosen over a
// hand-written one because it edits plain text (the stored bytes stay exactly what was typed,
// unlike rich-text editors that re-serialise Markdown), renders only the visible lines (a
// 10 MB note stays responsive), is accessible (a real contenteditable with ARIA, Tab leaves
// the editor, the completion list is a listbox), works with touch keyboards on phones, and is
// actively maintained in small modules, of which the page loads these: state and view, the
// default and history key bindings, search, autocompletion and the Markdown language.
//
// This file sets it up for the notes: soft-wrapped Markdown with highlighting by CSS classes
// (the page's colours, light and dark), `[[` completion of note titles and ids from the
// engine worker, and bold and italic keys (the editor's form handles save and the modes).

import { EditorSelection, EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap, drawSelection, highlightActiveLine, placeholder } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { markdown } from '@codemirror/lang-markdown';
import { syntaxHighlighting } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { autocompletion, completionKeymap, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import type { NoteRef } from '../engine/types.js';

export interface EditorHooks {
  /** Notes matching `query` (title or id), best first; the recent ones for ''. */
  complete(query: string): Promise<NoteRef[]>;
  changed(): void;
}

/** Wraps the selection (or inserts a pair at the cursor) with `mark`. */
function wrap(mark: string) {
  return (view: EditorView): boolean => {
    view.dispatch(
      view.state.changeByRange((range) => ({
        changes: [
          { from: range.from, insert: mark },
          { from: range.to, insert: mark },
        ],
        range: range.empty ? EditorSelection.cursor(range.from + mark.length) : EditorSelection.range(range.from + mark.length, range.to + mark.length),
      })),
    );
    return true;
  };
}

function wikiCompletion(hooks: EditorHooks) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const before = ctx.matchBefore(/\[\[[^\]\n|#]*$/);
    if (!before) return null;
    const query = before.text.slice(2);
    const refs = await hooks.complete(query);
    if (ctx.aborted) return null;
    const from = before.from + 2;
    return {
      from,
      filter: false,
      options: refs.map((r) => ({
        label: r.title ?? r.id,
        detail: r.title !== null && r.title !== r.id ? r.id : r.bundle,
        type: 'text',
        apply: (view: EditorView, _c: unknown, f: number, to: number) => {
          const closed = view.state.sliceDoc(to, to + 2) === ']]';
          const insert = closed ? r.id : `${r.id}]]`;
          view.dispatch({ changes: { from: f, to, insert }, selection: { anchor: f + insert.length + (closed ? 2 : 0) } });
        },
      })),
    };
  };
}

export function createEditor(parent: HTMLElement, text: string, crlf: boolean, hooks: EditorHooks): EditorView {
  const extensions: Extension[] = [
    history(),
    drawSelection(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    EditorView.lineWrapping,
    markdown(),
    syntaxHighlighting(classHighlighter),
    autocompletion({ override: [wikiCompletion(hooks)], icons: false }),
    placeholder('Write here, in Markdown. [[ links a note.'),
    keymap.of([
      { key: 'Mod-b', run: wrap('**') },
      { key: 'Mod-i', run: wrap('_') },
      ...completionKeymap,
      ...searchKeymap,
      ...historyKeymap,
      ...defaultKeymap,
    ]),
    EditorView.contentAttributes.of({ 'aria-label': 'The note’s Markdown', 'aria-describedby': 'editor-help', id: 'body-editor', spellcheck: 'true' }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) hooks.changed();
    }),
  ];
  if (crlf) extensions.push(EditorState.lineSeparator.of('\r\n'));
  const view = new EditorView({ parent, state: EditorState.create({ doc: text, extensions }) });
  // The whole text, for tests and tools (the DOM holds only the lines in view).
  (view.dom as HTMLElement & { notesEditor?: EditorView }).notesEditor = view;
  return view;
}

/** Replaces the whole text, keeping the editor's setup. */
export function setText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, selection: { anchor: 0 } });
}
