package redact

// givenNames is a small gazetteer of given names from many cultures, the
// layer of name detection that does not depend on the named-entity model:
// a capitalised word after one of these is a surname ("Siobhan
// O'Sullivan"). It is deliberately not exhaustive; docs/redaction.md
// says what else finds names.
const givenNames = `
aaron abigail adam adrian agnes aidan alan albert alex alexander alexandra alfred alice alicia alison amanda amber
amelia amy andrea andrew angela anita ann anna anne annie anthony april arthur ashley audrey austin barbara barry
beatrice becky ben benjamin bernard beth betty beverly bill billy blake bob bonnie brad bradley brandon brenda brian
bridget brittany bruce bryan caleb calvin cameron carl carla carlos carol caroline carolyn carrie catherine charles
charlie charlotte chelsea cheryl chloe chris christian christina christine christopher cindy claire clara clarence
claudia colin connor craig crystal cynthia daisy dale dan daniel danielle danny darren dave david dawn dean deborah
debra dennis derek diana diane donald donna doris dorothy douglas dylan earl edith edward eileen elaine eleanor elijah
elizabeth ella ellen emily emma eric erica erin ethan eugene evelyn fiona florence frances frank fred frederick gabriel
gail gary gavin george georgia gerald gina glenn gloria gordon grace graham greg gregory hannah harold harriet harry
hazel heather helen henry holly howard ian isaac isabel isabella isabelle jack jackie jacob jacqueline jake james jamie
jane janet janice jared jason jean jeff jeffrey jenna jennifer jenny jeremy jerry jesse jessica jill jim jimmy joan
joanne joe joel john johnny jon jonathan jordan joseph josh joshua joyce judith judy julia julian julie justin karen
kate katherine kathleen kathryn kathy katie keith kelly ken kenneth kevin kim kimberly kyle laura lauren lawrence leah
lee leo leon leonard leslie liam lily linda lindsay lisa logan lois louis louise lucas lucy luke lydia madison
margaret maria marie marilyn mark martha martin mary mason matthew megan melanie melissa michael michelle mike
mildred molly monica morgan nancy natalie nathan neil nicholas nicole noah norma oliver olivia oscar owen pamela
patricia patrick paul paula pauline peggy penny peter philip phillip phyllis rachel ralph randy raymond rebecca regina
richard rick rita robert robin roger ronald rose roy ruby russell ruth ryan sally sam samantha samuel sandra sara sarah
scott sean sharon shawn shirley sophia sophie stacy stanley stephanie stephen steve steven stuart susan suzanne sydney
tammy tanya teresa terry theresa thomas tiffany timothy tina todd tom tony tracy travis tyler valerie vanessa victor
victoria vincent virginia walter wanda wayne wendy william willie zachary zoe

siobhan aoife niamh saoirse ciara orla roisin róisín sinead sinéad eoin oisin oisín cian ciaran ciarán padraig pádraig
seamus séamus declan dermot fergus aisling grainne gráinne caoimhe eilidh iain hamish alasdair morag catriona rhys
gareth dafydd cerys bethan iwan gwen angharad

hans jürgen juergen klaus wolfgang dieter günter guenter helmut horst uwe rolf werner manfred gerhard karl heinz
friedrich franz fritz ludwig otto stefan sebastian tobias lukas lucas jonas leon finn felix maximilian moritz niklas
florian matthias andreas markus thorsten torsten sven jens dirk holger ralf uwe bernd ulrich jörg joerg kai lars
sabine ursula ute heike birgit petra monika renate gisela ingrid brigitte christa elke anke silke katrin kerstin
andrea claudia susanne stefanie anja nicole julia lena lea leonie mia emilia hannah johanna greta frieda ida
marlene charlotte clara paula jana svenja jasmin annika

jean pierre jacques michel philippe alain bernard christophe nicolas françois francois éric eric laurent olivier
thierry patrick sébastien sebastien julien mathieu matthieu guillaume antoine benoît benoit céline celine nathalie
isabelle sylvie catherine françoise francoise valérie valerie sandrine stéphanie stephanie aurélie aurelie camille
manon chloé chloe léa lea océane oceane margaux élodie elodie amélie amelie hélène helene agathe apolline mathilde
théo theo hugo louis gabriel arthur jules raphaël raphael adèle adele zoé zoe inès ines lucie juliette
jean-pierre jean-luc jean-paul jean-claude jean-marc marie-claire marie-hélène marie-helene anne-marie jean-baptiste

josé jose juan antonio manuel francisco javier jesús jesus carlos miguel rafael pedro ángel angel alejandro fernando
pablo sergio jorge alberto luis álvaro alvaro diego adrián adrian raúl raul enrique ramón ramon vicente joaquín
joaquin andrés andres iñaki inaki xavier jordi pau oriol mateo santiago sebastián matías matias nicolás
maría maria carmen josefa isabel dolores pilar teresa ana laura cristina marta francisca lucía lucia mercedes
rosa elena paula raquel sara beatriz nuria silvia julia irene patricia rocío rocio alba andrea claudia valentina
camila sofía sofia ximena guadalupe lupita esperanza consuelo inmaculada montserrat itziar ainhoa

joão joao paulo pedro tiago thiago rodrigo gonçalo goncalo rui nuno bruno ricardo marcelo gustavo felipe leonardo
rafaela beatriz mariana larissa fernanda gabriela juliana letícia leticia vitória vitoria conceição conceicao

giuseppe giovanni antonio mario luigi francesco alessandro marco andrea matteo lorenzo leonardo riccardo davide
stefano simone federico salvatore vincenzo gianluca massimo fabio paolo roberto sergio giulia francesca chiara
sara martina giorgia alessia elisa federica valentina silvia alessandra beatrice lucrezia gianna

jan piet kees joost sander bram daan lars sem thijs ruben niels wouter sanne femke lotte anouk eva fleur maartje
lieke ingrid

lars erik anders johan nils olof magnus henrik björn bjorn sven gunnar ingrid astrid sigrid karin britt linnea
freja saga elin maja ebba liv kari solveig mette kirsten søren soren jens mads rasmus

piotr paweł pawel krzysztof tomasz andrzej marek michał michal jakub wojciech łukasz lukasz agnieszka katarzyna
małgorzata malgorzata magdalena joanna zofia aleksandra dorota ewa barbara

ivan dmitri dmitry sergei sergey alexei alexey nikolai vladimir mikhail andrei yuri oleg boris igor pavel anatoly
natasha natalia olga svetlana tatiana irina elena yelena ekaterina anastasia oksana ludmila galina vera nadia
tomáš tomas jiří jiri petr jakub lenka petra jana tereza

mohammed muhammad mohamed mohammad ahmed ahmad ali omar hassan hussein hussain ibrahim youssef yusuf khalid karim
mustafa mahmoud abdullah abdul rashid tariq samir nabil walid faisal hamza bilal zaid ziad amir rami sami
fatima fatma aisha ayesha khadija maryam mariam zainab layla leila noor nour huda yasmin yasmine amira salma rania
hana dalia farah leena lina zahra zeynep emine elif ayşe ayse mehmet mustafa ahmet emre burak murat cem can deniz

raj rahul amit anil sunil vijay sanjay ravi arjun vikram rohan aditya karan deepak rajesh suresh ramesh manoj
krishna ganesh aarav vivaan priya pooja anjali neha kavya divya sunita anita lakshmi meera aishwarya deepika
shreya ananya riya sneha swati nisha rekha asha padma sita gita radha

wei li jun ming hao lei jie yang chen hui xin yan fang ying mei ling xiaoming xiaoling jing yu zhen qiang
hiroshi takashi kenji yuki haruto ren sota yuto hiroki kenta daiki takumi shota aiko yuko yoko keiko akiko sakura
hina yui aoi mei rin haruka misaki naoko emi ayumi
minjun seojun jiho junwoo hyun jisoo minji seoyeon jiwoo yuna soyeon eunji hyejin
minh anh linh lan thanh hung tuan duc quang huong trang thao mai hoa

kwame kofi kojo kwesi ama akua abena efua yaw ade ayodele adebayo oluwaseun olu chinedu chidi emeka ngozi chiamaka
amara adaeze nkechi ifeoma funmilayo folake tunde segun babajide thabo sipho themba thandiwe nomvula zanele
lindiwe tendai tatenda farai rudo wanjiru wambui njeri kamau otieno achieng akinyi baraka juma amani zawadi

keanu kai leilani malia koa makoa
`
