/*
 * Parse floor: load a YAML file into libyaml's document node tree
 * (yaml_parser_load) and exit. This is the least work any YAML-reading
 * tool must do before it can look at a workflow; `flow validate` and
 * `flow plan` are compared against it.
 *
 *   yaml_tree FILE        load every document in FILE, exit 0 (1 on error)
 *   yaml_tree -v FILE     also print the number of nodes loaded to stderr
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

int main(int argc, char **argv)
{
    int verbose = 0;
    int arg = 1;
    if (arg < argc && strcmp(argv[arg], "-v") == 0) {
        verbose = 1;
        arg++;
    }
    if (arg + 1 != argc) {
        fprintf(stderr, "usage: yaml_tree [-v] FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[arg], "rb");
    if (!f) {
        perror(argv[arg]);
        return 1;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        fprintf(stderr, "yaml_tree: cannot initialise parser\n");
        return 1;
    }
    yaml_parser_set_input_file(&parser, f);

    long nodes = 0;
    int docs = 0;
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc)) {
            fprintf(stderr, "yaml_tree: %s at line %zu column %zu\n",
                    parser.problem ? parser.problem : "parse error",
                    parser.problem_mark.line + 1, parser.problem_mark.column + 1);
            yaml_parser_delete(&parser);
            fclose(f);
            return 1;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {            /* end of stream */
            yaml_document_delete(&doc);
            break;
        }
        nodes += doc.nodes.top - doc.nodes.start;
        docs++;
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (verbose)
        fprintf(stderr, "yaml_tree: %d document(s), %ld nodes\n", docs, nodes);
    return 0;
}
